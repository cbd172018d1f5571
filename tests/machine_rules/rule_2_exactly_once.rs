//! Rule 2: exactly once.

use super::*;

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
