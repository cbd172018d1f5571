//! Rule 6: rev.

use super::*;

#[test]
fn rule_6_stale_and_unknown_tool_carry_the_current_rev() {
    let mut page = Page::new();
    let key = page.register(tool("gone"));
    page.register(tool("kept"));
    page.tm.unregister(key, page.now);
    page.drain();
    page.call_rev("s", "gone", json!({}), 2);
    assert_eq!(page.result("s")["code"], "stale");
    assert_eq!(page.result("s")["rev"], 3);
    page.call_rev("u", "gone", json!({}), 3);
    assert_eq!(page.result("u")["code"], "unknown_tool");
    page.call("n", "never", json!({}));
    assert_eq!(
        page.result("n"),
        json!({"status": "refused", "code": "unknown_tool", "message": "No such tool", "rev": 3})
    );
    page.call_rev("k", "kept", json!({}), 0);
    assert_eq!(
        page.take_runs().len(),
        1,
        "an old rev is fine when the tool is still there"
    );
}

#[test]
fn rule_6_a_queued_call_whose_tool_goes_away_is_answered_not_run() {
    let mut page = Page::new();
    page.register(tool("busy"));
    let key = page.register(tool("soon.gone"));
    page.call_rev("first", "busy", json!({}), 2);
    page.call_rev("second", "soon.gone", json!({}), 2);
    page.call("third", "soon.gone", json!({}));
    let run = only_run(&mut page);
    page.tm.unregister(key, page.now);
    page.drain();
    page.ok(run, json!(null));
    assert!(page.take_runs().is_empty());
    assert_eq!(
        page.result("second")["code"],
        "stale",
        "its rev 2 is older than 3"
    );
    assert_eq!(page.result("third")["code"], "unknown_tool", "no rev given");
}

/// JS may unregister a tool between the core's order and its start (a
/// listener of an earlier output does): JS then tells the core the tool's
/// functions are gone, and the call is answered as one whose tool is gone,
/// at whichever step it was (its run, its validation, what its
/// confirmation shows), never "Tool failed".
#[test]
fn rule_6_a_call_whose_tool_went_before_js_started_it_is_answered_stale_or_unknown_tool() {
    let mut page = Page::new();
    let plain = page.register(tool("plain"));
    let mut checked = tool("checked");
    checked.input_schema = Some(SchemaSpec::External { json: None });
    let checked = page.register(checked);
    let mut shown = consequential("shown");
    shown.has_summary = true;
    let shown = page.register(shown);
    let rev = page.tm.rev();

    page.call_rev("run", "plain", json!({}), rev);
    let run = only_run(&mut page);
    page.tm.unregister(plain, page.now);
    page.tm.handle_tool_gone(run, page.now);
    page.drain();
    assert_eq!(
        page.result("run"),
        json!({"status": "refused", "code": "stale",
            "message": "The tool is gone: use the latest manifest", "rev": rev + 1})
    );

    page.call("validate", "checked", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    page.tm.unregister(checked, page.now);
    page.tm.handle_tool_gone(run, page.now);
    page.drain();
    assert_eq!(
        page.result("validate")["code"],
        "unknown_tool",
        "no rev given"
    );

    page.call("prepare", "shown", json!({}));
    let order = take_prepare(&mut page);
    page.tm.unregister(shown, page.now);
    page.tm.handle_tool_gone(order.run, page.now);
    // Told twice, or of a run no call waits for: nothing more.
    page.tm.handle_tool_gone(order.run, page.now);
    page.tm.handle_tool_gone(RunId(order.run.0 + 100), page.now);
    page.drain();
    assert_eq!(page.result("prepare")["code"], "unknown_tool");

    assert!(page.take_runs().is_empty());
    assert!(
        !page.error_codes().contains(&ErrorEventCode::ToolThrew),
        "{:?}",
        page.errors()
    );
    assert!(page.tm.pending_confirmations().is_empty());
}

/// A run cancelled before JS found its tool gone ends as a cancelled one
/// does; JS took no snapshot for it, so there is no restorer to drop.
#[test]
fn rule_6_a_cancelled_run_whose_tool_went_before_it_started_is_cancelled_signal() {
    let mut page = Page::new();
    let mut def = tool("t");
    def.has_snapshot = true;
    let key = page.register(def);
    page.call("a", "t", json!({}));
    let run = only_run(&mut page);
    page.cancel("a");
    page.tm.unregister(key, page.now);
    page.tm.handle_tool_gone(run, page.now);
    page.drain();
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert_eq!(page.deadline(), None, "no grace period left to wait for");
    assert!(
        !page.actions.contains(&Action::DropRestorer { run }),
        "{:?}",
        page.actions
    );
}

/// Disposing a scope is one revision for all of its tools, sent to the
/// bridges as one manifest; disposing a scope that has none changes no
/// revision and sends nothing.
#[test]
fn rule_6_disposing_a_scope_is_one_revision_and_an_empty_one_none() {
    let mut page = Page::new();
    let cart = page.scope("cart");
    let empty = page.scope("empty");
    page.register_in(cart, tool("add"));
    page.register_in(cart, tool("remove"));
    let sent = page.manifests().len();
    page.tm.dispose_scope(empty, page.now).ok();
    page.drain();
    assert_eq!((page.tm.rev(), page.manifests().len()), (2, sent));
    page.tm.dispose_scope(cart, page.now).ok();
    page.drain();
    let manifests = page.manifests();
    assert_eq!((page.tm.rev(), manifests.len()), (3, sent + 1));
    assert_eq!(manifests.last().map(|m| &m["rev"]), Some(&json!(3)));
    assert!(page
        .events
        .iter()
        .any(|e| matches!(e, Event::RevChanged { rev: 3 })));
}
