//! The bridge core against the spec, rule by rule, natively with a
//! simulated clock. Each test names the rule it holds the core to.
// Native only: uses the regex crate (the wasm tests are tests/wasm.rs).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod support {
    pub mod harness;
}

use serde_json::{json, Value};
use support::harness::*;
use toolmark_bridge::machine::{
    Action, BridgeOptions, Config, Event, OnChange, Outcome, Output, PrepareOrder, Prepared, RunId,
    RunOrder, Validated,
};
use toolmark_bridge::policy::Caller;
use toolmark_bridge::protocol::{ErrorEventCode, FieldChange, Issue, ToolResult};
use toolmark_bridge::registry::{SchemaSpec, ScopeId};

fn only_run(page: &mut Page) -> toolmark_bridge::machine::RunId {
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].0
}

// ----- manifest ---------------------------------------------------------

#[test]
fn manifest_on_attach_may_be_empty() {
    let page = Page::new();
    assert_eq!(
        page.sent,
        vec![
            json!({"type": "manifest", "protocol": 1, "clientId": page.client_id(), "rev": 0, "tools": []})
        ]
    );
}

#[test]
fn manifest_on_every_revision_sorted_by_name() {
    let mut page = Page::new();
    page.register(tool("b.tool"));
    let key = page.register(consequential("a.tool"));
    page.tm.unregister(key, page.now);
    page.drain();
    let revs: Vec<u64> = page
        .manifests()
        .iter()
        .map(|m| m["rev"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(revs, [0, 1, 2, 3]);
    let manifests = page.manifests();
    let names: Vec<&str> = manifests[2]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["a.tool", "b.tool"]);
    assert_eq!(
        page.manifests()[2]["tools"][0],
        json!({"name": "a.tool", "llmName": "a__tool", "description": "The a.tool tool",
               "hints": {"consequential": true}})
    );
    assert_eq!(page.tm.rev(), 3);
}

#[test]
fn changed_mode_sends_changed_instead_of_manifest() {
    let mut page = Page::with_options(
        Config::default(),
        BridgeOptions {
            on_change: OnChange::Changed,
            ..BridgeOptions::default()
        },
    );
    page.register(tool("x"));
    assert_eq!(page.sent.len(), 2);
    assert_eq!(
        page.sent[0]["type"], "manifest",
        "attach still sends a manifest"
    );
    assert_eq!(
        page.sent[1],
        json!({"type": "changed", "protocol": 1, "clientId": page.client_id(), "rev": 1})
    );
}

// ----- rule 1: clientId ---------------------------------------------------

#[test]
fn rule_1_other_client_ids_are_ignored_silently() {
    let mut page = Page::new();
    page.register(tool("t"));
    let before = page.sent.len();
    page.inbound(json!({"protocol": 1, "type": "call", "clientId": "someone-else", "id": "1", "tool": "t", "input": {}}));
    // Even an invalid message for another page is ignored silently.
    page.inbound(json!({"protocol": 1, "type": "bogus", "clientId": "someone-else"}));
    page.inbound(json!({"protocol": 9, "type": "call", "clientId": "someone-else", "id": "2"}));
    assert_eq!(page.sent.len(), before);
    assert!(
        page.events
            .iter()
            .all(|e| !matches!(e, Event::Error { .. })),
        "{:?}",
        page.events
    );
    assert!(page.take_runs().is_empty());
}

// ----- rule 2: exactly once -------------------------------------------------

#[test]
fn rule_2_each_call_is_answered_exactly_once_and_duplicates_are_ignored() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("c1", "t", json!({}));
    page.call("c1", "t", json!({}));
    let run = only_run(&mut page);
    page.ok(run, json!(1));
    page.call("c1", "t", json!({}));
    page.describe("c1", "t");
    assert!(page.take_runs().is_empty());
    assert_eq!(page.result("c1"), json!({"status": "ok", "data": 1}));
}

#[test]
fn rule_2_the_answered_memory_holds_the_last_1000_ids() {
    let mut page = Page::new();
    page.register(tool("t"));
    for i in 0..1001 {
        page.describe(&format!("d{i}"), "t");
    }
    assert_eq!(page.tm.answered_ids(), 1000);
    page.describe("d1", "t"); // still remembered
    assert_eq!(page.results_for("d1").len(), 1);
    page.describe("d0", "t"); // forgotten: answered again
    assert_eq!(page.results_for("d0").len(), 2);
}

#[test]
fn rule_2_the_answered_memory_is_bounded_in_bytes_with_long_ids() {
    let mut page = Page::new();
    page.register(tool("t"));
    // 1001 describes whose ids are 100 KB each, differing only at the end
    // (straight to the core: the harness would parse every 100 KB result).
    let long = |i: usize| format!("{}{i:05}", "x".repeat(100_000));
    let cid = page.client_id();
    for i in 0..1001 {
        let text = format!(
            r#"{{"protocol":1,"type":"describe","clientId":"{cid}","id":"{}","tool":"t"}}"#,
            long(i)
        );
        page.tm.handle_inbound(page.bridge, &text, page.now);
        let mut results = 0;
        while let Output::Transmit(_) = page.tm.poll_output() {
            results += 1;
        }
        assert_eq!(results, 1);
    }
    assert_eq!(page.tm.answered_ids(), 1000);
    let held = page.tm.answered_memory_bytes();
    assert!(held <= 256 * 1024, "the memory holds {held} bytes");
    // At least each id's 32-byte digest, in the set and in the queue.
    assert!(held >= 1000 * 2 * 32, "the memory holds {held} bytes");
    // A long id replayed is still a duplicate; the oldest was forgotten.
    page.sent.clear();
    page.describe(&long(1000), "t");
    page.describe(&long(1), "t");
    assert!(
        page.sent.is_empty(),
        "a remembered long id was answered again"
    );
    page.describe(&long(0), "t");
    assert_eq!(
        page.results_for(&long(0)).len(),
        1,
        "forgotten: answered again"
    );
    // Short ids and a long one sharing their first 64 bytes stay apart.
    let prefix = "y".repeat(64);
    page.describe(&prefix, "t");
    page.describe(&format!("{prefix}z"), "t");
    page.describe(&prefix, "t");
    assert_eq!(page.results_for(&prefix).len(), 1);
    assert_eq!(page.results_for(&format!("{prefix}z")).len(), 1);
}

#[test]
fn rule_2_an_answered_id_replayed_after_detach_and_reattach_is_ignored() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("c1", "t", json!({}));
    let run = only_run(&mut page);
    page.ok(run, json!(1));
    page.describe("d1", "t");
    // Same page (same clientId), a new bridge: the memory is the page's.
    page.reattach();
    page.call("c1", "t", json!({}));
    page.describe("c1", "t");
    page.describe("d1", "t");
    assert!(page.take_runs().is_empty(), "an answered call ran again");
    assert_eq!(page.results_for("c1").len(), 1);
    assert_eq!(page.results_for("d1").len(), 1);
    assert_eq!(page.tm.answered_ids(), 2);
}

/// Rules 2 and 5 speak of the page, not of a bridge: a call still running
/// when its bridge detaches keeps its id and its scope until it settles.
/// The same id on a bridge attached later is a duplicate (not a second run
/// at once), another call on the scope waits, and once the first run
/// settles its id is remembered as answered (its result goes nowhere): a
/// replay does not run the tool again.
#[test]
fn rules_2_and_5_a_call_running_at_detach_keeps_its_id_and_scope_until_it_settles() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("c1", "t", json!({}));
    let run = only_run(&mut page);
    let first = page.bridge;
    page.reattach();
    assert!(page.actions.contains(&Action::Abort { run }));
    page.call("c1", "t", json!({}));
    assert!(
        page.take_runs().is_empty(),
        "the tool ran a second time for one id while the first run still runs"
    );
    page.call("c2", "t", json!({}));
    assert!(page.take_runs().is_empty(), "two runs at once in one scope");
    assert_eq!(page.tm.scope_pending("t"), Some(2));
    assert!(page.tm.is_call_in_flight("c1"));
    page.settle(run, Outcome::Ok(Some("1".into())));
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        runs[0].4, "c2",
        "the scope's next call starts once c1 settled"
    );
    assert!(
        page.sent_all
            .iter()
            .all(|(_, m)| !(m["type"] == "result" && m["id"] == "c1")),
        "the detached call's result is sent on no bridge"
    );
    assert!(page.sent_on(first).iter().all(|m| m["type"] != "result"));
    assert_eq!(page.tm.answered_ids(), 1, "c1 is remembered as answered");
    page.call("c1", "t", json!({}));
    assert!(page.take_runs().is_empty(), "a replayed id ran again");
    assert!(page.error_codes().is_empty(), "{:?}", page.error_codes());
}

/// A run aborted by a detach that never settles gets the abort grace
/// period, as a cancelled one does: then its scope is free, its id is
/// remembered, and an outcome after that is a `late_result`.
#[test]
fn a_call_running_at_detach_is_abandoned_after_the_grace_period() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("c1", "t", json!({}));
    let run = only_run(&mut page);
    page.reattach();
    page.call("c2", "t", json!({}));
    assert!(page.take_runs().is_empty());
    assert_eq!(page.deadline(), Some(page.now + 3_000));
    page.advance(2_999);
    assert!(page.take_runs().is_empty(), "still within its grace period");
    page.advance(1);
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].4, "c2");
    assert!(!page.tm.is_call_in_flight("c1"));
    page.call("c1", "t", json!({}));
    assert!(page.take_runs().is_empty(), "a replayed id ran again");
    page.settle(run, Outcome::Ok(None));
    assert_eq!(page.error_codes(), [ErrorEventCode::LateResult]);
}

#[test]
fn rule_2_two_bridges_of_one_page_run_and_answer_a_call_once() {
    let mut page = Page::new();
    page.register(tool("t"));
    let main = page.bridge;
    let other = page.attach(BridgeOptions::default());
    // Both bridges receive the same call: the first delivery runs it and is
    // answered on its bridge; the second is a duplicate (in flight).
    page.call("c1", "t", json!({}));
    page.call_on(other, "c1", "t", json!({}));
    let run = only_run(&mut page);
    page.ok(run, json!(1));
    // Answered: a duplicate on either bridge.
    page.call_on(other, "c1", "t", json!({}));
    page.describe_on(other, "c1", "t");
    assert!(page.take_runs().is_empty(), "the second bridge ran it too");
    assert_eq!(page.result("c1"), json!({"status": "ok", "data": 1}));
    let results_on = |page: &Page, b| {
        page.sent_on(b)
            .iter()
            .filter(|m| m["type"] == "result")
            .count()
    };
    assert_eq!((results_on(&page, main), results_on(&page, other)), (1, 0));
    // The other way round: first delivered on the second bridge.
    page.describe_on(other, "d1", "t");
    page.describe("d1", "t");
    assert_eq!((results_on(&page, main), results_on(&page, other)), (1, 1));
}

// ----- rule 4: protocol ------------------------------------------------------

#[test]
fn rule_4_other_protocols_are_answered_only_with_a_string_id_for_this_page() {
    let mut page = Page::new();
    let cid = page.client_id();
    page.inbound(json!({"protocol": 2, "type": "call", "clientId": cid, "id": "p1", "tool": "t", "input": {}}));
    assert_eq!(
        page.result("p1"),
        json!({"status": "error", "message": "unsupported protocol"})
    );
    page.inbound(json!({"protocol": 2, "clientId": cid, "id": "p1"}));
    assert_eq!(page.results_for("p1").len(), 1, "answered once");
    let before = page.sent.len();
    page.inbound(json!({"protocol": 2, "clientId": cid, "id": 5}));
    page.inbound(json!({"protocol": 2, "id": "p2"}));
    assert_eq!(
        page.sent.len(),
        before,
        "no string id or no clientId: dropped"
    );
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::InvalidMessage,
            ErrorEventCode::InvalidMessage
        ]
    );
}

// ----- rule 5: scopes ----------------------------------------------------------

#[test]
fn rule_5_calls_are_serialized_per_scope_and_parallel_across_scopes() {
    let mut page = Page::new();
    let signup = page.scope("signup");
    let cart = page.scope("cart");
    page.register_in(signup, tool("fill"));
    page.register_in(signup, tool("check"));
    page.register_in(cart, tool("add"));
    page.call("a", "signup.fill", json!({}));
    page.call("b", "signup.check", json!({}));
    page.call("c", "cart.add", json!({}));
    let runs = page.take_runs();
    let names: Vec<&str> = runs.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        names,
        ["signup.fill", "cart.add"],
        "one per scope at a time"
    );
    page.ok(runs[0].0, json!("filled"));
    let next = page.take_runs();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].1, "signup.check", "FIFO within the scope");
    page.ok(next[0].0, json!(null));
    page.ok(runs[1].0, json!(null));
    let order: Vec<&str> = page
        .sent
        .iter()
        .filter(|m| m["type"] == "result")
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(order, ["a", "b", "c"]);
}

#[test]
fn rule_5_more_than_32_pending_on_a_scope_is_refused_busy() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.register(tool("u"));
    for i in 0..32 {
        page.call(&format!("c{i}"), "t", json!({}));
    }
    assert_eq!(page.tm.max_pending_per_scope(), 32);
    assert_eq!(page.tm.calls_in_flight(), 32);
    assert_eq!(page.tm.scope_pending("u"), Some(32), "one scope for both");
    assert_eq!(page.tm.scope_pending("none"), None);
    page.call("c32", "u", json!({}));
    assert_eq!(
        page.result("c32"),
        json!({"status": "refused", "code": "busy", "message": "The tool's scope already has 32 pending calls"})
    );
    let run = page.take_runs()[0].0;
    page.ok(run, json!(1));
    page.call("c33", "t", json!({}));
    assert!(
        page.results_for("c33").is_empty(),
        "room again after one finished"
    );
}

#[test]
fn rule_5_input_held_across_scopes_past_32_mib_is_refused_busy() {
    let mut page = Page::new();
    for scope in ["a", "b", "c", "d"] {
        let id = page.scope(scope);
        page.register_in(id, tool("t"));
    }
    // 0.9 MiB of input each: four run at once (their input is JS's), and
    // 35 wait holding 31.5 MiB; a 36th would take the total past 32 MiB.
    let input = json!({ "v": "x".repeat(943_700) });
    let text_bytes = input.to_string().len();
    for i in 0..40 {
        page.call(
            &format!("c{i}"),
            &format!("{}.t", ["a", "b", "c", "d"][i % 4]),
            input.clone(),
        );
    }
    let runs = page.take_runs();
    assert_eq!(runs.len(), 4);
    assert!(
        runs.iter().all(|run| run.2 == input),
        "each run gets the input"
    );
    assert_eq!(page.tm.calls_in_flight(), 39);
    assert_eq!(page.tm.held_input_bytes(), 35 * text_bytes);
    assert!((0..39).all(|i| page.results_for(&format!("c{i}")).is_empty()));
    assert_eq!(
        page.result("c39"),
        json!({"status": "refused", "code": "busy", "message": "The page already holds 32 MiB of input for pending calls"})
    );
    // A small call still fits; a finished run lets the next one start, and
    // the bytes it held are free again.
    page.call("small", "d.t", json!({}));
    assert!(page.results_for("small").is_empty());
    page.ok(runs[0].0, json!(null));
    assert_eq!(page.tm.held_input_bytes(), 34 * text_bytes + 2);
    page.call("c40", "a.t", input.clone());
    assert!(page.results_for("c40").is_empty(), "room again");
}

#[test]
fn pending_confirmations_hold_their_input_within_the_budget() {
    let options = BridgeOptions {
        max_message_bytes: 20 * 1_048_576,
        ..BridgeOptions::default()
    };
    let mut page = Page::with_options(Config::default(), options);
    page.register(consequential("pay"));
    page.register(tool("t"));
    let input = json!({ "v": "x".repeat(16 * 1_048_576) });
    let text_bytes = input.to_string().len();
    page.call("a", "pay", input.clone());
    let confirm_id = confirm_id_of(&page.result("a"));
    assert_eq!(
        page.tm.held_input_bytes(),
        text_bytes,
        "kept for the approval"
    );
    page.call("b", "pay", input.clone());
    assert_eq!(page.result("b")["code"], "busy");
    page.tm.confirm(&confirm_id, false, page.now);
    page.drain();
    assert_eq!(page.tm.held_input_bytes(), 0);
    page.call("c", "pay", input);
    assert_eq!(page.result("c")["status"], "needs_confirmation");
}

#[test]
fn a_call_larger_than_the_input_budget_runs_when_nothing_else_is_held() {
    let options = BridgeOptions {
        max_message_bytes: 40 * 1_048_576,
        ..BridgeOptions::default()
    };
    let mut page = Page::with_options(Config::default(), options);
    page.register(tool("t"));
    let input = json!({ "v": "x".repeat(33 * 1_048_576) });
    page.call("first", "t", json!({}));
    page.call("big", "t", input.clone());
    assert!(page.results_for("big").is_empty(), "nothing held: taken");
    page.call("next", "t", json!({}));
    assert_eq!(page.result("next")["code"], "busy");
    let first = page.take_runs()[0].0;
    page.ok(first, json!(null));
    let runs = page.take_runs();
    assert_eq!(runs[0].2, input);
    assert_eq!(page.tm.held_input_bytes(), 0);
}

// ----- rule 6: rev ---------------------------------------------------------------

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

// ----- describe ------------------------------------------------------------------------

#[test]
fn describe_returns_the_full_entry_and_refuses_unknown_or_hidden_tools() {
    let mut page = Page::with_config(Config {
        policy: json!({"inapp": {"destructive": "hide"}}),
        ..Config::default()
    });
    let mut def = tool("form.fill");
    def.title = Some("Fill".into());
    def.input_schema = Some(SchemaSpec::Json(
        json!({"type": "object", "properties": {"email": {"type": "string"}}}),
    ));
    def.output_schema = Some(SchemaSpec::Json(json!({"type": "string"})));
    page.register(def);
    let mut hidden = tool("wipe");
    hidden.hints.destructive = Some(true);
    page.register(hidden);
    page.describe("d1", "form.fill");
    assert_eq!(
        page.result("d1"),
        json!({"status": "ok", "data": {"name": "form.fill", "llmName": "form__fill", "title": "Fill",
            "description": "The form.fill tool", "hints": {},
            "inputSchema": {"type": "object", "properties": {"email": {"type": "string"}}},
            "outputSchema": {"type": "string"}}})
    );
    page.describe("d2", "wipe");
    assert_eq!(
        page.result("d2"),
        json!({"status": "refused", "code": "unknown_tool", "message": "No such tool", "rev": 2})
    );
    page.call("c", "wipe", json!({}));
    assert_eq!(page.result("c")["code"], "unknown_tool");
    let tools = page
        .manifests()
        .last()
        .map(|m| m["tools"].clone())
        .unwrap_or_default();
    assert_eq!(
        tools.as_array().map(Vec::len),
        Some(1),
        "hidden tools are not in the manifest"
    );
    assert_eq!(
        page.tm.manifest(Caller::Human).len(),
        2,
        "the human still sees it"
    );
    // The full entries (WebMCP's tool list) are the describe results.
    let entries = page.tm.manifest_entries(Caller::Inapp);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].to_value(), page.result("d1")["data"]);
    assert_eq!(page.tm.manifest_entries(Caller::Human).len(), 2);
}

// ----- cancel and the abort grace period -----------------------------------------------

#[test]
fn cancel_of_a_queued_call_answers_cancelled_signal_at_once() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    page.call("b", "t", json!({}));
    page.cancel("b");
    assert_eq!(
        page.result("b"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert_eq!(
        page.sent.iter().filter(|m| m["id"] == "b").count(),
        1,
        "cancel itself is never answered"
    );
}

#[test]
fn cancel_of_a_running_call_aborts_it_and_its_own_result_follows() {
    let mut page = Page::new();
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    let run = only_run(&mut page);
    page.cancel("a");
    assert!(page.actions.contains(&Action::Abort { run }));
    assert!(
        page.results_for("a").is_empty(),
        "not answered before the tool settles"
    );
    page.settle(run, Outcome::Aborted);
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    page.cancel("a");
    page.cancel("nobody");
    assert_eq!(page.results_for("a").len(), 1);
}

/// A page whose abort grace period is 500 ms, with tool `t`.
fn graced_page() -> Page {
    let mut page = Page::with_config(Config {
        abort_grace_ms: 500,
        ..Config::default()
    });
    page.register(tool("t"));
    page
}

/// Calls `t` as `id`, the scope's only call, and cancels it once it runs.
fn cancelled_run(page: &mut Page, id: &str) -> RunId {
    page.call(id, "t", json!({}));
    let run = only_run(page);
    page.cancel(id);
    run
}

#[test]
fn what_an_aborted_run_throws_is_its_abort_in_its_grace_period_and_after() {
    let mut page = graced_page();
    let run = cancelled_run(&mut page, "a");
    page.settle(run, Outcome::Threw("AbortError: signal is aborted".into()));
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert_eq!(page.error_codes(), [], "an abort is no tool_threw");

    let run = cancelled_run(&mut page, "b");
    page.advance(500);
    page.settle(run, Outcome::Threw("AbortError".into()));
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::LateResult,
            "tool 't' was aborted after its call was abandoned".to_owned()
        )]
    );

    page.call("c", "t", json!({}));
    let run = only_run(&mut page);
    page.settle(run, Outcome::Threw("TypeError".into()));
    assert_eq!(
        page.result("c"),
        json!({"status": "error", "message": "Tool failed"}),
        "a run nobody aborted that throws failed"
    );
}

#[test]
fn a_repeated_cancel_neither_answers_early_nor_moves_the_grace_period() {
    let mut page = graced_page();
    let run = cancelled_run(&mut page, "a");
    page.advance(300);
    page.cancel("a");
    assert!(
        page.results_for("a").is_empty(),
        "still in its grace period"
    );
    assert_eq!(page.deadline(), Some(page.now + 200));
    page.ok(run, json!("settled in time"));
    assert_eq!(
        page.result("a"),
        json!({"status": "ok", "data": "settled in time"})
    );
    assert!(page.error_codes().is_empty(), "{:?}", page.events);
}

#[test]
fn a_tool_that_ignores_abort_is_answered_after_the_grace_period_and_reports_late_result() {
    let mut page = graced_page();
    page.call("a", "t", json!({}));
    page.call("b", "t", json!({}));
    let run = only_run(&mut page);
    page.cancel("a");
    assert_eq!(page.deadline(), Some(page.now + 500));
    page.advance(499);
    assert!(page.results_for("a").is_empty());
    page.advance(1);
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert_eq!(
        page.take_runs().len(),
        1,
        "the scope moves on to the next call"
    );
    page.ok(run, json!("too late"));
    assert_eq!(page.results_for("a").len(), 1);
    assert_eq!(page.error_codes(), [ErrorEventCode::LateResult]);
}

// ----- results ------------------------------------------------------------------------------

#[test]
fn results_are_generic_and_details_go_to_events() {
    let mut page = Page::new();
    page.register(tool("t"));
    for (id, outcome) in [
        (
            "threw",
            Outcome::Threw("TypeError: x is undefined at secret.js:1".into()),
        ),
        (
            "cyclic",
            Outcome::NotSerializable("Converting circular structure".into()),
        ),
        ("undefined", Outcome::Ok(None)),
        (
            "date",
            Outcome::Ok(Some("\"2026-11-30T10:00:00.000Z\"".into())),
        ),
    ] {
        page.call(id, "t", json!({}));
        let run = only_run(&mut page);
        page.settle(run, outcome);
    }
    assert_eq!(
        page.result("threw"),
        json!({"status": "error", "message": "Tool failed"})
    );
    assert_eq!(
        page.result("cyclic"),
        json!({"status": "error", "message": "Result not serializable"})
    );
    assert_eq!(page.result("undefined"), json!({"status": "ok"}));
    assert_eq!(
        page.result("date"),
        json!({"status": "ok", "data": "2026-11-30T10:00:00.000Z"})
    );
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::ToolThrew, ErrorEventCode::TransportFailed]
    );
    let detail = page.events.iter().find_map(|e| match e {
        Event::Error { message, tool, .. } => Some((message.clone(), tool.clone())),
        _ => None,
    });
    assert_eq!(
        detail,
        Some((
            "TypeError: x is undefined at secret.js:1".into(),
            Some("t".into())
        ))
    );
}

#[test]
fn input_is_validated_against_the_schema_with_dotted_paths() {
    let mut page = Page::new();
    let mut def = tool("order");
    def.input_schema = Some(SchemaSpec::Json(json!({
        "type": "object", "required": ["email", "items"],
        "properties": {
            "email": {"type": "string", "pattern": "^[^@]+@[^@]+$"},
            "items": {"type": "array", "items": {"type": "object", "required": ["name"],
                       "properties": {"name": {"type": "string"}}}}
        }
    })));
    page.register(def);
    page.call(
        "bad",
        "order",
        json!({"email": "nope", "items": [{"name": 3}]}),
    );
    assert!(
        page.take_runs().is_empty(),
        "invalid input never reaches the tool"
    );
    assert_eq!(
        page.result("bad"),
        json!({"status": "invalid", "issues": [
            {"path": "email", "message": "must match pattern \"^[^@]+@[^@]+$\""},
            {"path": "items.0.name", "message": "must be string"}
        ]})
    );
    page.call(
        "good",
        "order",
        json!({"email": "a@b", "items": [{"name": "x"}]}),
    );
    assert_eq!(page.take_runs().len(), 1);
}

#[test]
fn an_invalid_result_reports_at_most_100_issues_and_counts_the_rest() {
    use toolmark_bridge::protocol::{validate, Direction};
    let mut page = Page::new();
    let mut def = tool("list");
    def.input_schema = Some(SchemaSpec::Json(
        json!({"type": "array", "items": {"type": "string"}}),
    ));
    page.register(def);
    let mut external = tool("ext");
    external.input_schema = Some(SchemaSpec::External { json: None });
    page.register(external);
    // 5000 wrong items: 5000 issues found.
    page.call("many", "list", Value::Array(vec![json!(1); 5000]));
    let issues = page.result("many")["issues"].clone();
    let issues = issues.as_array().cloned().unwrap_or_default();
    assert_eq!(issues.len(), 100, "at most 100 issues in the result");
    assert_eq!(issues[0], json!({"path": "0", "message": "must be string"}));
    assert_eq!(
        issues[98],
        json!({"path": "98", "message": "must be string"})
    );
    assert_eq!(
        issues[99],
        json!({"path": "", "message": "4901 more issues not shown"})
    );
    // Exactly 100 found: all shown.
    page.call("hundred", "list", Value::Array(vec![json!(1); 100]));
    let hundred = page.result("hundred")["issues"].clone();
    assert_eq!(hundred.as_array().map(Vec::len), Some(100));
    assert_eq!(hundred[99]["path"], "99");
    // A Standard Schema's issues (from JS) are capped the same way.
    page.call("js", "ext", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    let many: Vec<Issue> = (0..349_000)
        .map(|i| Issue {
            path: i.to_string(),
            message: "Expected string".into(),
        })
        .collect();
    page.tm
        .handle_validated(run, Validated::Invalid(many), page.now);
    page.drain();
    let js = page.result("js")["issues"].clone();
    assert_eq!(js.as_array().map(Vec::len), Some(100));
    assert_eq!(
        js[99],
        json!({"path": "", "message": "348901 more issues not shown"})
    );
    for message in &page.sent {
        assert!(validate(message, Direction::ToAgent).is_ok(), "{message}");
    }
}

#[test]
fn standard_schema_inputs_are_validated_by_js_and_may_be_transformed() {
    let mut page = Page::new();
    let mut def = tool("t");
    def.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(def);
    page.call("a", "t", json!({"n": "5"}));
    let run = match page.actions.pop() {
        Some(Action::Validate { run, input, .. }) => {
            assert_eq!(input, r#"{"n":"5"}"#);
            run
        }
        other => panic!("expected Validate, got {other:?}"),
    };
    page.tm
        .handle_validated(run, Validated::Valid(Some(r#"{"n":5}"#.into())), page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs[0].2, json!({"n": 5}));
    page.ok(runs[0].0, json!(null));
    page.call("b", "t", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate")
    };
    page.tm.handle_validated(
        run,
        Validated::Invalid(vec![Issue {
            path: "n".into(),
            message: "Required".into(),
        }]),
        page.now,
    );
    page.drain();
    assert_eq!(
        page.result("b"),
        json!({"status": "invalid", "issues": [{"path": "n", "message": "Required"}]})
    );
}

#[test]
fn a_validated_value_json_cannot_write_fails_the_call_with_its_reason() {
    let mut page = Page::new();
    let mut ext = tool("ext");
    ext.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(ext);
    page.call("v", "ext", json!({"n": "5"}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    page.tm.handle_validated(
        run,
        Validated::NotJson(String::from("bigint at \"n\"")),
        page.now,
    );
    page.drain();
    assert_eq!(
        page.result("v"),
        json!({"status": "error", "message": "Tool failed"})
    );
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::ToolThrew,
            String::from("validated input is not JSON-safe: bigint at \"n\"")
        )]
    );
    assert!(page.take_runs().is_empty(), "nothing ran");
}

#[test]
fn a_validator_or_summary_that_throws_answers_tool_failed_and_reports_tool_threw() {
    let mut page = Page::new();
    let mut ext = tool("ext");
    ext.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(ext);
    let mut pay = consequential("pay");
    pay.has_summary = true;
    page.register(pay);
    page.call("v", "ext", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    page.tm
        .handle_validated(run, Validated::Threw("boom in validate".into()), page.now);
    page.drain();
    page.call("s", "pay", json!({}));
    let Some(Action::Prepare(PrepareOrder { run, .. })) = page.actions.pop() else {
        panic!("prepare expected: {:?}", page.actions)
    };
    page.tm
        .handle_prepared(run, Err("boom in summary".into()), page.now);
    page.drain();
    for id in ["v", "s"] {
        assert_eq!(
            page.result(id),
            json!({"status": "error", "message": "Tool failed"})
        );
    }
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::ToolThrew, ErrorEventCode::ToolThrew]
    );
    assert!(page.take_runs().is_empty(), "nothing ran");
}

// ----- rule 7 and deferred confirmation ---------------------------------------------------------

fn confirm_id_of(result: &Value) -> String {
    assert_eq!(result["status"], "needs_confirmation", "{result}");
    result["confirmId"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn rule_7_consequential_and_destructive_tools_need_confirmation() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let mut wipe = tool("wipe");
    wipe.hints.destructive = Some(true);
    page.register(wipe);
    page.call("a", "pay", json!({"amount": 5}));
    page.call("b", "wipe", json!({}));
    assert!(
        page.take_runs().is_empty(),
        "nothing runs for the agent without a human"
    );
    let id = confirm_id_of(&page.result("a"));
    assert_eq!(id.len(), 36, "a UUID");
    assert_eq!(page.result("a")["summary"], "Run pay");
    confirm_id_of(&page.result("b"));
    assert_eq!(page.tm.pending_confirmations().len(), 2);
    assert!(page.events.contains(&Event::PendingChanged));
}

#[test]
fn a_summary_alone_is_prepared_before_the_confirmation() {
    let mut page = Page::new();
    let mut def = consequential("pay");
    def.has_summary = true;
    page.register(def);
    page.call("c1", "pay", json!({"amount": 5}));
    let Some(Action::Prepare(PrepareOrder {
        run,
        summary: true,
        changes: false,
        state: false,
        ..
    })) = page.actions.pop()
    else {
        panic!("prepare expected: {:?}", page.actions)
    };
    assert!(page.results_for("c1").is_empty(), "not before the summary");
    page.tm.handle_prepared(
        run,
        Ok(Prepared {
            summary: Some("Pay 5".into()),
            ..Prepared::default()
        }),
        page.now,
    );
    page.drain();
    assert_eq!(page.result("c1")["summary"], "Pay 5");
}

#[test]
fn approval_runs_the_tool_as_human_and_sends_confirmed_after_the_result() {
    let mut page = Page::new();
    let mut def = consequential("signup.submit");
    def.has_summary = true;
    def.has_changes = true;
    def.has_snapshot = true;
    def.sensitive = vec!["password".into(), "card".into()];
    page.register(def);
    page.call("c1", "signup.submit", json!({"email": "a@b"}));
    let Some(Action::Prepare(PrepareOrder {
        run,
        summary: true,
        changes: true,
        state: false,
        ..
    })) = page.actions.pop()
    else {
        panic!("prepare expected: {:?}", page.actions)
    };
    page.tm.handle_prepared(
        run,
        Ok(Prepared {
            summary: Some("Create the account a@b".into()),
            changes: Some(vec![
                FieldChange {
                    path: "email".into(),
                    before: None,
                    after: Some(json!("a@b")),
                },
                FieldChange {
                    path: "password".into(),
                    before: Some(json!("old")),
                    after: Some(json!("hunter2")),
                },
                FieldChange {
                    path: "card.number".into(),
                    before: None,
                    after: Some(json!("4111")),
                },
                FieldChange {
                    path: "cardholder".into(),
                    before: None,
                    after: Some(json!("Ann")),
                },
            ]),
            state: None,
        }),
        page.now,
    );
    page.drain();
    let result = page.result("c1");
    let confirm_id = confirm_id_of(&result);
    assert_eq!(result["summary"], "Create the account a@b");
    assert_eq!(
        result["changes"],
        json!([
            {"path": "email", "after": "a@b"},
            {"path": "password", "before": "[redacted]", "after": "[redacted]"},
            {"path": "card.number", "after": "[redacted]"},
            {"path": "cardholder", "after": "Ann"}
        ])
    );
    let pending = page.tm.pending_confirmations();
    assert_eq!(pending[0].expires_at, page.now + 600_000);
    let handle = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0].1.as_str(), runs[0].3.as_str(), runs[0].4.as_str()),
        ("signup.submit", "human", "c1")
    );
    assert_eq!(runs[0].2, json!({"email": "a@b"}));
    let approved_run = runs[0].0;
    page.ok(runs[0].0, json!({"account": 42}));
    assert_eq!(
        page.confirmed_for(&confirm_id),
        [json!({"status": "ok", "data": {"account": 42}})]
    );
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Ok {
            data: Some(json!({"account": 42}).into())
        })
    );
    let result_at = page.sent.iter().position(|m| m["id"] == "c1");
    let confirmed_at = page.sent.iter().position(|m| m["type"] == "confirmed");
    assert!(result_at < confirmed_at);
    // Already used: refused, and no second confirmed.
    let again = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    assert_eq!(
        page.completed(again),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::ConfirmationExpired,
            message: "The confirmation expired or was already used".into(),
            rev: None
        })
    );
    assert_eq!(page.confirmed_for(&confirm_id).len(), 1);
    // The approved run's restorer is kept under the call's id.
    let undo = page.tm.undo("c1");
    page.drain();
    assert!(page
        .actions
        .iter()
        .any(|a| matches!(a, Action::Restore { restorer, .. } if *restorer == approved_run)));
    let Some(Action::Restore { run, .. }) = page.actions.pop() else {
        panic!()
    };
    page.tm.handle_restored(run, Ok(()));
    page.drain();
    assert_eq!(page.completed(undo), Some(ToolResult::Ok { data: None }));
}

#[test]
fn rejection_is_cancelled_operator() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    page.tm.confirm(&id, false, page.now);
    page.drain();
    assert_eq!(
        page.confirmed_for(&id),
        [json!({"status": "cancelled", "by": "operator"})]
    );
    assert!(page.take_runs().is_empty());
    assert!(page.tm.pending_confirmations().is_empty());
}

#[test]
fn an_approval_whose_tool_is_gone_is_refused_stale_not_cancelled() {
    let mut page = Page::new();
    let key = page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    page.tm.unregister(key, page.now);
    page.drain();
    let handle = page.tm.confirm(&id, true, page.now);
    page.drain();
    let refused = page.confirmed_for(&id);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (refused[0]["status"].as_str(), refused[0]["code"].as_str()),
        (Some("refused"), Some("stale"))
    );
    assert_eq!(refused[0]["rev"], page.tm.rev());
    assert!(page.take_runs().is_empty());
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused { .. })
    ));
}

#[test]
fn confirmations_expire_after_600000_ms_by_default() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    assert_eq!(page.deadline(), Some(page.now + 600_000));
    page.advance(599_999);
    assert!(page.confirmed_for(&id).is_empty());
    page.advance(1);
    assert_eq!(
        page.confirmed_for(&id),
        [
            json!({"status": "refused", "code": "confirmation_expired", "message": "The confirmation expired or was already used"})
        ]
    );
    let late = page.tm.confirm(&id, true, page.now);
    page.drain();
    assert!(matches!(
        page.completed(late),
        Some(ToolResult::Refused { .. })
    ));
    assert!(page.take_runs().is_empty());
    assert_eq!(page.deadline(), None);
}

#[test]
fn a_confirmed_whose_bridge_has_gone_goes_out_on_the_bridges_attached_then() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("a", "pay", json!({}));
    page.call("b", "pay", json!({}));
    page.call("c", "pay", json!({}));
    let approved = confirm_id_of(&page.result("a"));
    let rejected = confirm_id_of(&page.result("b"));
    let expired = confirm_id_of(&page.result("c"));
    let first = page.bridge;
    page.tm.detach(first, page.now);
    page.drain();
    let second = page.attach(BridgeOptions::default());
    let third = page.attach(BridgeOptions::default());
    page.tm.confirm(&approved, true, page.now);
    page.drain();
    let run = only_run(&mut page);
    page.ok(run, json!("paid"));
    page.tm.confirm(&rejected, false, page.now);
    page.drain();
    let confirmed = |page: &Page, bridge, id: &str| -> Vec<Value> {
        page.sent_on(bridge)
            .into_iter()
            .filter(|m| m["type"] == "confirmed" && m["confirmId"] == id)
            .map(|m| m["result"].clone())
            .collect()
    };
    for bridge in [second, third] {
        assert_eq!(
            confirmed(&page, bridge, &approved),
            [json!({"status": "ok", "data": "paid"})]
        );
        assert_eq!(
            confirmed(&page, bridge, &rejected),
            [json!({"status": "cancelled", "by": "operator"})]
        );
    }
    assert!(
        confirmed(&page, first, &approved).is_empty(),
        "not on the gone bridge"
    );
    // No bridge attached: dropped, but the page's list and events still move on.
    page.tm.detach(second, page.now);
    page.tm.detach(third, page.now);
    page.drain();
    let sent = page.sent_all.len();
    page.events.clear();
    page.advance(600_000);
    assert_eq!(page.sent_all.len(), sent, "nowhere to send it");
    assert!(page.tm.pending_confirmations().is_empty());
    assert!(page.events.contains(&Event::PendingChanged));
    // A bridge attached later does not get it.
    let fourth = page.attach(BridgeOptions::default());
    assert!(confirmed(&page, fourth, &expired).is_empty());
}

#[test]
fn the_101st_pending_confirmation_expires_the_oldest() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    for i in 0..101 {
        page.call(&format!("c{i}"), "pay", json!({}));
    }
    assert_eq!(page.tm.pending_confirmation_count(), 100);
    let oldest = confirm_id_of(&page.result("c0"));
    assert_eq!(
        page.confirmed_for(&oldest)[0]["code"],
        "confirmation_expired"
    );
    let result_at = page.sent.iter().position(|m| m["id"] == "c0");
    let confirmed_at = page.sent.iter().position(|m| m["type"] == "confirmed");
    assert!(result_at < confirmed_at);
}

#[test]
fn a_form_changed_since_the_request_is_refused_stale() {
    let mut page = Page::new();
    let mut def = consequential("form.submit");
    def.has_state = true;
    page.register(def);
    for (id, later_state) in [("changed", "v2"), ("same", "v1")] {
        page.call(id, "form.submit", json!({}));
        let Some(Action::Prepare(PrepareOrder {
            run, state: true, ..
        })) = page.actions.pop()
        else {
            panic!()
        };
        page.tm.handle_prepared(
            run,
            Ok(Prepared {
                state: Some("v1".into()),
                ..Prepared::default()
            }),
            page.now,
        );
        page.drain();
        let confirm_id = confirm_id_of(&page.result(id));
        page.tm.confirm(&confirm_id, true, page.now);
        page.drain();
        let Some(Action::ReadState { run, .. }) = page.actions.pop() else {
            panic!("{:?}", page.actions)
        };
        page.tm
            .handle_state(run, Ok(Some(later_state.into())), page.now);
        page.drain();
        if id == "changed" {
            assert!(page.take_runs().is_empty());
            assert_eq!(
                page.confirmed_for(&confirm_id),
                [
                    json!({"status": "refused", "code": "stale", "message": "Form changed since confirmation was requested", "rev": 1})
                ]
            );
        } else {
            assert_eq!(page.take_runs().len(), 1);
        }
    }
}

// ----- registry and policy -----------------------------------------------------------------

#[test]
fn registry_names_scopes_and_duplicates() {
    let mut page = Page::new();
    let tm = &mut page.tm;
    let now = 0;
    assert!(tm
        .register(ScopeId::ROOT, tool("bad name"), now)
        .ok()
        .flatten()
        .is_none());
    assert!(tm
        .register(ScopeId::ROOT, tool(&"x".repeat(129)), now)
        .ok()
        .flatten()
        .is_none());
    assert!(tm
        .register(ScopeId::ROOT, tool("a.b"), now)
        .ok()
        .flatten()
        .is_some());
    assert!(tm
        .register(ScopeId::ROOT, tool("a.b"), now)
        .ok()
        .flatten()
        .is_none());
    assert!(
        tm.register(ScopeId::ROOT, tool("a__b"), now)
            .ok()
            .flatten()
            .is_none(),
        "same llmName"
    );
    let scope = tm
        .create_scope(ScopeId::ROOT, "signup")
        .ok()
        .flatten()
        .unwrap_or(ScopeId::ROOT);
    let inner = tm
        .create_scope(scope, "address")
        .ok()
        .flatten()
        .unwrap_or(ScopeId::ROOT);
    assert!(tm
        .register(inner, tool("fill"), now)
        .ok()
        .flatten()
        .is_some());
    assert!(tm
        .register(ScopeId(999), tool("x"), now)
        .ok()
        .flatten()
        .is_none());
    assert_eq!(tm.rev(), 2);
    tm.dispose_scope(scope, now).ok();
    assert_eq!(tm.rev(), 3, "one revision for the whole scope");
    assert!(tm
        .register(inner, tool("again"), now)
        .ok()
        .flatten()
        .is_none());
    page.drain();
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::InvalidName,
            ErrorEventCode::InvalidName,
            ErrorEventCode::DuplicateName,
            ErrorEventCode::DuplicateName,
            ErrorEventCode::InvalidScope,
            ErrorEventCode::ScopeDisposed
        ]
    );
    let names: Vec<String> = page
        .tm
        .manifest(Caller::Inapp)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a.b"]);
}

#[test]
fn dev_mode_turns_misconfiguration_into_errors() {
    let mut page = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    let error = page
        .tm
        .register(ScopeId::ROOT, tool("bad name"), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::InvalidName.into()));
    let mut def = tool("remote");
    def.input_schema = Some(SchemaSpec::Json(
        json!({"$ref": "https://example.com/s.json"}),
    ));
    let error = page
        .tm
        .register(ScopeId::ROOT, def.clone(), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::SchemaConversionFailed.into()));
    assert_eq!(page.tm.rev(), 0, "nothing registered");
    let mut prod = Page::new();
    prod.register(def);
    assert_eq!(prod.error_codes(), [ErrorEventCode::SchemaConversionFailed]);
    prod.describe("d", "remote");
    assert_eq!(
        prod.result("d")["data"]["inputSchema"],
        json!({}),
        "production registers it with {{}}"
    );
    let bad_policy = Config {
        dev: true,
        policy: json!({"human": {"x": "deny"}}),
        ..Config::default()
    };
    let core = toolmark_bridge::machine::Toolmark::new(
        bad_policy,
        Box::new(SeededRandom::new(1)),
        Box::new(RegexPatterns),
    );
    assert_eq!(
        core.err().map(|e| e.code),
        Some(ErrorEventCode::InvalidPolicy.into())
    );
}

/// Without random bytes the page has no `clientId`: `createToolmark`
/// throws `host_unsupported` (what the host lacks), naming itself.
#[test]
fn a_registry_without_random_bytes_is_refused_host_unsupported() {
    struct NoCrypto;
    impl toolmark_bridge::ids::RandomSource for NoCrypto {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), toolmark_bridge::ids::RandomError> {
            Err(toolmark_bridge::ids::RandomError("no crypto".into()))
        }
    }
    let error = toolmark_bridge::machine::Toolmark::new(
        Config::default(),
        Box::new(NoCrypto),
        Box::new(RegexPatterns),
    )
    .err()
    .map(|e| (e.code.as_str(), e.message));
    assert_eq!(
        error,
        Some((
            "host_unsupported",
            "createToolmark: random source failed: no crypto".to_owned()
        ))
    );
}

/// A pattern the page's matcher cannot run: registration says so (dev:
/// thrown), and no input gets past it, even one the pattern sits under a
/// `not` for (an error there must not turn into "valid").
#[test]
fn a_refused_pattern_is_reported_at_registration_and_answers_every_call_invalid() {
    let mut def = tool("guarded");
    def.input_schema = Some(SchemaSpec::Json(json!({
        "type": "object",
        "properties": {"path": {"type": "string", "not": {"pattern": "(?<=a)b"}}},
    })));
    let mut dev = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    let error = dev.tm.register(ScopeId::ROOT, def.clone(), 0).err();
    assert_eq!(
        error.as_ref().map(|e| e.code),
        Some(ErrorEventCode::SchemaConversionFailed.into())
    );
    let message = error.map(|e| e.message).unwrap_or_default();
    assert!(
        message.starts_with("tool 'guarded': its input schema's pattern \"(?<=a)b\" is refused: "),
        "{message}"
    );
    assert_eq!(dev.tm.rev(), 0, "nothing registered");
    let mut prod = Page::new();
    prod.register(def);
    assert_eq!(prod.error_codes(), [ErrorEventCode::SchemaConversionFailed]);
    prod.call("c1", "guarded", json!({"path": "xb"}));
    assert!(prod.take_runs().is_empty(), "the tool never runs");
    let result = prod.result("c1");
    assert_eq!(result["status"], "invalid", "{result}");
    assert_eq!(result["issues"][0]["path"], "");
    let issue = result["issues"][0]["message"].as_str().unwrap_or_default();
    assert!(
        issue.starts_with(
            "the tool's input schema was refused at registration: pattern \"(?<=a)b\" is refused: "
        ),
        "{issue}"
    );
    prod.describe("d", "guarded");
    assert_eq!(prod.result("d")["data"]["inputSchema"], json!({}));
}

#[test]
fn policy_deny_is_not_allowed_and_bad_policies_are_reported() {
    let mut page = Page::with_config(Config {
        policy: json!({"inapp": {"untrustedContent": "deny", "consequential": "allow", "bogus": "allow"}}),
        confirm_mode: json!({"inapp": "inline"}),
        ..Config::default()
    });
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::InvalidPolicy,
            ErrorEventCode::InvalidPolicy,
            ErrorEventCode::InvalidConfirmMode
        ]
    );
    let mut reader = tool("read.page");
    reader.hints.untrusted_content = Some(true);
    page.register(reader);
    page.call("r", "read.page", json!({}));
    assert_eq!(page.result("r")["code"], "not_allowed");
    let human = page
        .tm
        .call("read.page", "{}", Caller::Human, None, page.now);
    page.drain();
    let run = only_run(&mut page);
    page.ok(run, json!("text"));
    assert_eq!(
        page.completed(human),
        Some(ToolResult::Ok {
            data: Some(json!("text").into())
        }),
        "policy binds the agent, not the human"
    );
    page.register(consequential("pay"));
    page.call("p", "pay", json!({}));
    assert_eq!(
        page.result("p")["status"],
        "needs_confirmation",
        "'allow' for consequential was refused"
    );
}

#[test]
fn without_a_confirmation_path_consequential_tools_are_not_allowed() {
    let mut page = Page::with_config(Config {
        confirm_mode: json!({"inapp": "none"}),
        ..Config::default()
    });
    page.register(consequential("pay"));
    assert_eq!(page.error_codes(), [ErrorEventCode::MissingConfirmHandler]);
    page.register(tool("read"));
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::MissingConfirmHandler],
        "a tool that needs no confirmation needs no path"
    );
    page.call("p", "pay", json!({}));
    assert_eq!(page.result("p")["code"], "not_allowed");
    let mut deferred = Page::new();
    deferred.register(consequential("pay"));
    assert_eq!(deferred.error_codes(), [], "deferred mode is a path");
    let mut dev = Page::with_config(Config {
        dev: true,
        confirm_mode: json!({"inapp": "none"}),
        ..Config::default()
    });
    let error = dev
        .tm
        .register(ScopeId::ROOT, consequential("pay"), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::MissingConfirmHandler.into()));
}

#[test]
fn ctx_confirm_is_only_for_callers_with_an_inline_path() {
    let mut page = Page::with_config(Config {
        inline_confirm: true,
        ..Config::default()
    });
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    let run = only_run(&mut page);
    assert!(!page.tm.ctx_confirm(run));
    page.drain();
    assert_eq!(page.error_codes(), [ErrorEventCode::CtxConfirmUnavailable]);
    page.tm.call("t", "{}", Caller::Human, None, page.now);
    page.ok(run, json!(null));
    let human_run = only_run(&mut page);
    assert!(page.tm.ctx_confirm(human_run));
}

#[test]
fn the_tool_budget_warns_in_dev_mode_once_per_revision() {
    let mut page = Page::with_config(Config {
        dev: true,
        tool_budget: 2,
        ..Config::default()
    });
    for name in ["a", "b", "c", "d"] {
        page.register(tool(name));
    }
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::ToolBudgetExceeded,
            ErrorEventCode::ToolBudgetExceeded
        ]
    );
    let mut prod = Page::with_config(Config {
        tool_budget: 2,
        ..Config::default()
    });
    for name in ["a", "b", "c"] {
        prod.register(tool(name));
    }
    assert!(prod.error_codes().is_empty(), "dev only");
}

#[test]
fn the_undo_store_keeps_the_last_100_restorers() {
    let mut page = Page::new();
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);
    let mut runs_of = Vec::new();
    for i in 0..101 {
        page.call(&format!("e{i}"), "edit", json!({}));
        let runs = page.take_runs();
        assert_eq!(runs[0].4, format!("e{i}"));
        runs_of.push(runs[0].0);
        page.ok(runs[0].0, json!(null));
    }
    assert!(page
        .actions
        .contains(&Action::DropRestorer { run: runs_of[0] }));
    let evicted = page.tm.undo("e0");
    let kept = page.tm.undo("e100");
    page.drain();
    assert!(matches!(
        page.completed(evicted),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::UndoUnavailable,
            ..
        })
    ));
    assert!(page.completed(kept).is_none(), "its restorer runs");
    // A failed run keeps no restorer.
    page.call("f", "edit", json!({}));
    let run = only_run(&mut page);
    page.settle(run, Outcome::Threw("boom".into()));
    assert!(page.actions.contains(&Action::DropRestorer { run }));
    let none = page.tm.undo("f");
    page.drain();
    assert!(matches!(
        page.completed(none),
        Some(ToolResult::Refused { .. })
    ));
}

#[test]
fn a_call_cancelled_while_its_snapshot_is_taken_never_runs_and_keeps_no_restorer() {
    let mut page = Page::with_config(Config {
        abort_grace_ms: 500,
        ..Config::default()
    });
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);
    page.register(tool("plain"));

    page.call("a", "edit", json!({}));
    let running = only_run(&mut page);
    assert!(page.tm.runs_after_snapshot(running), "still its call's run");

    // Cancelled in its grace period: no run; what the run settles as is its abort.
    page.cancel("a");
    assert!(!page.tm.runs_after_snapshot(running));
    page.settle(running, Outcome::Aborted);
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert!(page
        .actions
        .contains(&Action::DropRestorer { run: running }));
    let undo = page.tm.undo("a");
    page.drain();
    assert!(matches!(
        page.completed(undo),
        Some(ToolResult::Refused { .. })
    ));

    // Abandoned after its grace period: the snapshot settling later starts nothing.
    page.call("b", "edit", json!({}));
    let abandoned = only_run(&mut page);
    page.cancel("b");
    page.advance(500);
    assert_eq!(
        page.result("b"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert!(!page.tm.runs_after_snapshot(abandoned));
    page.settle(abandoned, Outcome::Aborted);
    assert_eq!(page.results_for("b").len(), 1);

    // A run that asked for no snapshot, or is over, is no snapshot's.
    page.call("c", "plain", json!({}));
    let plain = only_run(&mut page);
    assert!(!page.tm.runs_after_snapshot(plain));
    page.ok(plain, json!(null));
    page.call("d", "edit", json!({}));
    let done = only_run(&mut page);
    page.ok(done, json!(null));
    assert!(!page.tm.runs_after_snapshot(done));
}

#[test]
fn output_schemas_are_checked_in_dev_mode_only() {
    for dev in [true, false] {
        let mut page = Page::with_config(Config {
            dev,
            ..Config::default()
        });
        let mut def = tool("t");
        def.output_schema = Some(SchemaSpec::Json(json!({"type": "string"})));
        page.register(def);
        page.call("a", "t", json!({}));
        let run = only_run(&mut page);
        page.ok(run, json!(5));
        assert_eq!(page.result("a"), json!({"status": "ok", "data": 5}));
        let expected: &[ErrorEventCode] = if dev {
            &[ErrorEventCode::OutputInvalid]
        } else {
            &[]
        };
        assert_eq!(page.error_codes(), expected);
    }
}

#[test]
fn a_run_checks_its_output_only_in_dev_mode_with_a_standard_schema_output() {
    let external = || {
        Some(SchemaSpec::External {
            json: Some(json!({"type": "object"})),
        })
    };
    for (dev, output, check) in [
        (true, external(), true),
        (false, external(), false),
        (
            true,
            Some(SchemaSpec::Json(json!({"type": "object"}))),
            false,
        ),
        (true, None, false),
    ] {
        let mut page = Page::with_config(Config {
            dev,
            ..Config::default()
        });
        assert_eq!(page.tm.is_dev(), dev);
        let mut t = tool("t");
        t.output_schema = output.clone();
        page.register(t);
        page.call("a", "t", json!({}));
        let order = page.actions.iter().find_map(|action| match action {
            Action::Run(order) => Some(order.check_output),
            _ => None,
        });
        assert_eq!(order, Some(check), "dev {dev}, output {output:?}");
    }
}

#[test]
fn a_standard_schema_output_check_reports_its_first_issue_or_its_throw() {
    let mut page = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    page.register(tool("t"));
    let issue = |path: &str, message: &str| Issue {
        path: path.into(),
        message: message.into(),
    };
    let checks = [
        (Ok(vec![]), None),
        (
            Ok(vec![issue("a.b", "must be a string"), issue("c", "other")]),
            Some("output of 't' fails its output schema at 'a.b': must be a string"),
        ),
        (
            Err("TypeError: boom".to_owned()),
            Some("output of 't' fails its output schema: its validator threw (TypeError: boom)"),
        ),
    ];
    for (id, (checked, expected)) in ["a", "b", "c"].into_iter().zip(checks) {
        page.events.clear();
        page.call(id, "t", json!({}));
        let run = only_run(&mut page);
        page.tm.handle_output_checked(run, checked);
        page.ok(run, json!(5));
        let expected: Vec<_> = expected
            .map(|message| (ErrorEventCode::OutputInvalid, message.to_owned()))
            .into_iter()
            .collect();
        assert_eq!(page.errors(), expected);
        assert_eq!(page.result(id), json!({"status": "ok", "data": 5}));
    }
}

// ----- rule 8: hostile input ------------------------------------------------------------------

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

// ----- transport connection state ---------------------------------------------------------------

fn status_events(page: &Page) -> Vec<(String, Value)> {
    page.events
        .iter()
        .filter_map(|e| match e {
            Event::Status { bridge, status } => Some((
                format!("bridge {}", bridge.0),
                serde_json::to_value(status).unwrap_or_default(),
            )),
            Event::Error { code, message, .. } => {
                Some((format!("error {}", code.as_str()), json!(message)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn transport_states_are_status_events_and_a_failed_attempt_is_transport_failed() {
    use toolmark_bridge::transport::status::Status;
    let mut page = Page::new();
    let bridge = page.bridge;
    let closed = Status::Closed {
        code: Some(1006),
        reason: String::new(),
        terminal: false,
    };
    for status in [
        Status::Connecting { attempt: 1 },
        closed.clone(),
        Status::Reconnecting {
            attempt: 2,
            delay_ms: Some(500),
        },
        Status::Connecting { attempt: 2 },
        Status::Open,
        closed,
    ] {
        page.tm.handle_transport_status(bridge, status);
    }
    page.drain();
    assert_eq!(
        status_events(&page),
        [
            (
                "bridge 0".into(),
                json!({"state": "connecting", "attempt": 1})
            ),
            (
                "bridge 0".into(),
                json!({"state": "closed", "code": 1006, "reason": "", "terminal": false})
            ),
            (
                "error transport_failed".into(),
                json!("transport: connection attempt 1 failed (code 1006); retrying")
            ),
            (
                "bridge 0".into(),
                json!({"state": "reconnecting", "attempt": 2, "delayMs": 500})
            ),
            (
                "bridge 0".into(),
                json!({"state": "connecting", "attempt": 2})
            ),
            ("bridge 0".into(), json!({"state": "open"})),
            // A connection that was open and dropped: no error.
            (
                "bridge 0".into(),
                json!({"state": "closed", "code": 1006, "reason": "", "terminal": false})
            ),
        ]
    );
}

#[test]
fn a_state_the_transport_could_not_describe_is_a_transport_failed_event_while_attached() {
    let mut page = Page::new();
    let bridge = page.bridge;
    page.drain();
    page.events.clear();
    page.tm.handle_unreadable_status(bridge);
    page.drain();
    assert_eq!(
        status_events(&page),
        [(
            "error transport_failed".into(),
            json!("bridge: transport.onStatus gave a state that is not connecting, open, reconnecting or closed")
        )]
    );
    page.events.clear();
    page.tm.detach(bridge, page.now);
    page.tm.handle_unreadable_status(bridge);
    page.drain();
    assert_eq!(status_events(&page), []);
}

#[test]
fn a_detached_bridges_transport_states_are_not_told() {
    use toolmark_bridge::transport::status::Status;
    let mut page = Page::new();
    let bridge = page.bridge;
    page.tm.detach(bridge, page.now);
    page.drain();
    page.events.clear();
    page.tm
        .handle_transport_status(bridge, Status::Connecting { attempt: 1 });
    page.drain();
    assert_eq!(status_events(&page), []);
}
