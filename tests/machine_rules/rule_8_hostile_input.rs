//! Rule 8: hostile input.

use super::*;

/// A page whose bridge takes messages of up to 200 bytes, with tool `t`: it,
/// its clientId, and how many messages it had sent.
fn limited_page() -> (Page, String, usize) {
    let mut page = Page::with_options(
        Config::default(),
        BridgeOptions {
            max_message_bytes: 200,
            ..BridgeOptions::default()
        },
    );
    page.register(tool("t"));
    let cid = page.client_id();
    let before = page.sent.len();
    (page, cid, before)
}

#[test]
fn rule_8_invalid_messages_are_dropped_with_invalid_message_and_never_answered() {
    let (mut page, cid, before) = limited_page();
    let big = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "big", "tool": "t", "input": "x".repeat(200)});
    page.inbound(big);
    page.inbound_text(&format!("{}{}", "[".repeat(65), "]".repeat(65)));
    page.inbound_text("{not json");
    page.inbound(json!({"protocol": 1, "type": "call", "clientId": cid, "id": "i", "tool": "t"}));
    page.inbound(json!({"protocol": 1, "type": "result", "clientId": cid, "id": "i", "result": {"status": "ok"}}));
    page.inbound(
        json!({"protocol": 1, "type": "cancel", "clientId": cid, "id": "i", "extra": true}),
    );
    page.inbound(
        json!({"protocol": 1, "type": "call", "clientId": 42, "id": "n", "tool": "t", "input": {}}),
    );
    assert_eq!(page.sent.len(), before, "never answered");
    assert_eq!(page.error_codes(), vec![ErrorEventCode::InvalidMessage; 7]);
    assert!(page.take_runs().is_empty());
}

/// A WebSocket frame reaches the bridge unread by its transport: one that is
/// not JSON text is dropped silently, whatever its size (the transport's
/// rule, before the bridge's limit); JSON the bridge refuses is still
/// `invalid_message`, and a frame it reads is handled as any message.
#[test]
fn a_frame_that_is_not_json_is_dropped_silently_and_json_is_read_as_any_message() {
    let (mut page, cid, before) = limited_page();
    let frame = |page: &mut Page, text: &str| {
        page.tm.handle_inbound_frame(page.bridge, text, page.now);
        page.drain();
    };
    for text in [
        "{not json",
        "",
        "[1,]",
        "{} {}",
        &format!("[\"{}", "x".repeat(300)),
    ] {
        frame(&mut page, text);
    }
    assert_eq!(page.error_codes(), [], "dropped silently");
    // JSON that the bridge refuses: too large, deeper than 64 (JSON or not), a number past
    // the largest double, not a message.
    let big = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "big", "tool": "t", "input": "x".repeat(200)});
    frame(&mut page, &big.to_string());
    frame(&mut page, &format!("{}{}", "[".repeat(65), "]".repeat(65)));
    frame(&mut page, &format!("{}x", "[".repeat(65)));
    frame(&mut page, r#"{"protocol": 1, "n": 1e400}"#);
    frame(&mut page, "[1]");
    assert_eq!(page.error_codes(), vec![ErrorEventCode::InvalidMessage; 5]);
    assert_eq!(page.sent.len(), before, "never answered");
    let call = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "c", "tool": "t", "input": {}});
    frame(&mut page, &call.to_string());
    assert_eq!(page.take_runs().len(), 1);
}

#[test]
fn detaching_aborts_in_flight_calls_and_closes_the_transport() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    page.call("b", "t", json!({}));
    let run = only_run(&mut page);
    let sent = page.sent.len();
    page.tm.detach(page.bridge, page.now);
    page.drain();
    assert!(page.actions.contains(&Action::Abort { run }));
    assert!(page.actions.contains(&Action::Close {
        bridge: page.bridge
    }));
    page.ok(run, json!(1));
    assert_eq!(page.sent.len(), sent, "nothing is sent after detach");
    assert!(page.take_runs().is_empty(), "queued calls are dropped");
    assert_eq!(page.tm.calls_in_flight(), 0);
}

#[test]
fn an_empty_id_with_another_protocol_is_dropped_not_answered() {
    let mut page = Page::new();
    let cid = page.client_id();
    let before = page.sent.len();
    page.inbound(json!({"protocol": 2, "clientId": cid, "id": ""}));
    assert_eq!(page.sent.len(), before);
    assert_eq!(page.error_codes(), [ErrorEventCode::InvalidMessage]);
}

#[test]
fn a_confirmation_past_its_expiry_is_refused_even_before_the_timer_fires() {
    let mut page = Page::with_config(Config {
        confirm_expiry_ms: 1_000,
        ..Config::default()
    });
    page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    page.now += 5_000; // the timer has not run (a throttled tab)
    let handle = page.tm.confirm(&id, true, page.now);
    page.drain();
    assert!(page.take_runs().is_empty());
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused { .. })
    ));
    assert_eq!(page.confirmed_for(&id)[0]["code"], "confirmation_expired");
}

#[test]
fn a_tool_aborted_by_detach_reports_no_late_result() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    let run = only_run(&mut page);
    page.tm.detach(page.bridge, page.now);
    page.drain();
    page.settle(run, Outcome::Aborted);
    assert!(page.error_codes().is_empty(), "{:?}", page.error_codes());
}

#[test]
fn rule_5_an_approval_on_a_full_scope_is_refused_busy_and_stays_pending() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.register(tool("t"));
    page.call("p", "pay", json!({}));
    let id = confirm_id_of(&page.result("p"));
    for i in 0..32 {
        page.call(&format!("c{i}"), "t", json!({}));
    }
    let handle = page.tm.confirm(&id, true, page.now);
    page.drain();
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::Busy,
            ..
        })
    ));
    assert_eq!(page.tm.max_pending_per_scope(), 32);
    assert!(page.confirmed_for(&id).is_empty(), "nothing final yet");
    assert_eq!(page.tm.pending_confirmations().len(), 1, "still pending");
}

/// The approval is for the registration the confirmation was asked for: a
/// tool registered again under the same name, on a full scope, is another
/// tool, so the approval is refused stale (not busy) and the confirmation is
/// used up.
#[test]
fn rule_5_an_approval_for_a_tool_registered_again_on_a_full_scope_is_stale() {
    let mut page = Page::new();
    let asked_for = page.register(consequential("pay"));
    page.call("p", "pay", json!({}));
    let id = confirm_id_of(&page.result("p"));
    page.tm.unregister(asked_for, page.now);
    page.register(consequential("pay"));
    page.register(tool("t"));
    for i in 0..32 {
        page.call(&format!("c{i}"), "t", json!({}));
    }
    assert_eq!(page.tm.scope_pending("pay"), Some(32));
    let handle = page.tm.confirm(&id, true, page.now);
    page.drain();
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::Stale,
            ..
        })
    ));
    assert!(page.tm.pending_confirmations().is_empty(), "used up");
}

/// The lanes a detach aborts stay busy until their runs settle (rules 2
/// and 5 are the page's): the page calls queued behind them start as each
/// aborted run settles.
#[test]
fn detach_frees_each_lane_when_its_aborted_run_settles() {
    let mut page = Page::new();
    let first = page.scope("first");
    let second = page.scope("second");
    assert!(first < second);
    page.register_in(first, tool("t"));
    page.register_in(second, tool("t"));
    // The bridge's calls hold both lanes, the second scope's taken first.
    page.call("x", "second.t", json!({}));
    page.call("y", "first.t", json!({}));
    let held = page.take_runs();
    assert_eq!(held.len(), 2);
    page.tm
        .call("second.t", "{}", Caller::Human, None, page.now);
    page.tm.call("first.t", "{}", Caller::Human, None, page.now);
    page.drain();
    assert!(page.take_runs().is_empty(), "both lanes are busy");
    page.actions.clear();
    page.tm.detach(page.bridge, page.now);
    page.drain();
    let order = |page: &Page| -> Vec<String> {
        page.actions
            .iter()
            .map(|a| match a {
                Action::Abort { run } if *run == held[0].0 => "abort x".to_owned(),
                Action::Abort { run } if *run == held[1].0 => "abort y".to_owned(),
                Action::Close { .. } => "close".to_owned(),
                Action::Run(RunOrder { name, .. }) => format!("run {name}"),
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(
        order(&page),
        ["abort x", "abort y", "close"],
        "the aborted runs still hold their lanes"
    );
    page.actions.clear();
    page.settle(held[1].0, Outcome::Aborted);
    assert_eq!(order(&page), ["run first.t"]);
    page.actions.clear();
    page.settle(held[0].0, Outcome::Aborted);
    assert_eq!(order(&page), ["run second.t"]);
    assert_eq!(page.tm.answered_ids(), 2);
}

#[test]
fn a_message_without_json_text_is_dropped_with_invalid_message() {
    let mut page = Page::new();
    let sent = page.sent_on(page.bridge).len();
    page.tm.handle_inbound_not_json(page.bridge);
    page.drain();
    assert_eq!(page.error_codes(), [ErrorEventCode::InvalidMessage]);
    assert_eq!(page.sent_on(page.bridge).len(), sent, "never answered");
}

/// A bridge takes messages from its attach on, before anything it queued is
/// handed out (a transport may deliver inside its subscription): its
/// manifest goes first, then the answer; an invalid message is
/// `invalid_message`. A detached bridge takes none, in any form.
#[test]
fn a_bridge_takes_messages_from_its_attach_and_none_after_its_detach() {
    let mut page = Page::new();
    page.register(tool("t"));
    let cid = page.client_id();
    let bridge = page.tm.attach(BridgeOptions::default());
    let call = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "c1", "tool": "t", "input": {}});
    page.tm.handle_inbound(bridge, &call.to_string(), page.now);
    let invalid = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "c2"});
    page.tm
        .handle_inbound(bridge, &invalid.to_string(), page.now);
    page.drain();
    assert_eq!(page.error_codes(), [ErrorEventCode::InvalidMessage]);
    let run = only_run(&mut page);
    page.ok(run, json!("ran"));
    let sent = page.sent_on(bridge);
    let kinds: Vec<_> = sent.iter().map(|m| m["type"].clone()).collect();
    assert_eq!(kinds, [json!("manifest"), json!("result")]);
    assert_eq!(sent[1]["result"], json!({"status": "ok", "data": "ran"}));

    page.tm.detach(bridge, page.now);
    page.drain();
    let events = page.events.len();
    let again = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "c3", "tool": "t", "input": {}});
    page.tm.handle_inbound(bridge, &again.to_string(), page.now);
    page.tm
        .handle_inbound_frame(bridge, &again.to_string(), page.now);
    page.tm.handle_inbound(bridge, "{not json", page.now);
    page.tm.handle_inbound_not_json(bridge);
    page.tm.handle_inbound_unread(bridge, 5_000_000);
    page.drain();
    assert_eq!(page.events.len(), events, "no event");
    assert!(page.take_runs().is_empty(), "nothing runs");
    assert_eq!(page.sent_on(bridge).len(), 2, "nothing is sent");
}

/// A message longer than the limit in UTF-16 units is longer in UTF-8
/// bytes too: the core reads messages up to the limit in units and refuses
/// a longer one unread, with `invalid_message` giving the length it knows
/// as a lower bound; a detached bridge reads nothing.
#[test]
fn a_message_longer_than_the_limit_in_units_is_refused_unread() {
    let (mut page, _, before) = limited_page();
    let bridge = page.bridge;
    assert!(page.tm.inbound_reads(bridge, 200), "at the limit: read");
    assert!(!page.tm.inbound_reads(bridge, 201), "one unit over: unread");
    assert!(!page.tm.inbound_reads(BridgeId(99), 1), "not attached");
    page.tm.handle_inbound_unread(bridge, 5_000_000);
    page.tm.handle_inbound_unread(bridge, 200);
    page.tm.handle_inbound_unread(BridgeId(99), 5_000_000);
    page.drain();
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::InvalidMessage,
            "message of at least 5000000 bytes exceeds maxMessageBytes 200".to_owned()
        )],
        "one unit count within the limit is no rejection"
    );
    assert_eq!(page.sent.len(), before, "never answered");
    page.tm.detach(bridge, page.now);
    assert!(!page.tm.inbound_reads(bridge, 1));
}

/// `poll_output` hands out what several inputs queued in the drain order
/// (every message, then every event, then every action), not in the order
/// they were queued, and ends with the next deadline, again and again.
#[test]
fn poll_output_enforces_the_drain_order_and_ends_with_the_deadline() {
    let mut page = Page::new();
    let cid = page.client_id();
    // Not drained: a revision (a manifest and an event), then a call (a run).
    let registered = page.tm.register(ScopeId::ROOT, tool("t"), page.now);
    assert!(matches!(registered, Ok(Some(_))));
    let call = json!({"protocol": 1, "type": "call", "clientId": cid, "id": "c1",
                      "tool": "t", "input": {}});
    page.tm
        .handle_inbound(page.bridge, &call.to_string(), page.now);
    let mut order = Vec::new();
    let mut run = None;
    let deadline = loop {
        match page.tm.poll_output() {
            Output::Transmit(t) => order.push(format!("transmit {}", &t.text[..17])),
            Output::Event(Event::RevChanged { rev }) => order.push(format!("rev {rev}")),
            Output::Event(e) => order.push(format!("{e:?}")),
            Output::Action(Action::Run(RunOrder { run: r, .. })) => {
                run = Some(r);
                order.push("run".into());
            }
            Output::Action(a) => order.push(format!("{a:?}")),
            Output::Timeout(deadline) => break deadline,
        }
    };
    assert_eq!(
        order,
        ["transmit {\"type\":\"manifest", "rev 1", "run"],
        "the message first, then the event, then the action"
    );
    assert_eq!(deadline, None, "nothing is waiting for a time");
    assert!(run.is_some());
    // A cancel aborts the run and starts its grace period: the abort, then
    // the deadline, which stays the answer until time passes it.
    page.cancel("c1");
    assert!(page
        .actions
        .iter()
        .any(|a| matches!(a, Action::Abort { .. })));
    assert_eq!(page.deadline, Some(page.now + 3_000));
    assert_eq!(
        page.tm.poll_output(),
        Output::Timeout(Some(page.now + 3_000))
    );
    assert_eq!(
        page.tm.poll_output(),
        Output::Timeout(Some(page.now + 3_000))
    );
}
