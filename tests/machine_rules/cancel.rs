//! Cancel and the abort grace period.

use super::*;

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
fn a_host_is_held_for_an_aborted_run_s_grace_period_and_not_for_a_confirmation_s_expiry() {
    let mut page = graced_page();
    page.register(consequential("pay"));
    page.call("p", "pay", json!({}));
    page.drain();
    assert!(page.deadline.is_some(), "the confirmation expires");
    assert!(!page.tm.awaits_grace());
    let run = cancelled_run(&mut page, "a");
    assert!(page.tm.awaits_grace());
    page.settle(run, Outcome::Aborted);
    assert!(!page.tm.awaits_grace());
    let abandoned = cancelled_run(&mut page, "b");
    page.advance(500);
    assert_eq!(
        page.result("b"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert!(
        !page.tm.awaits_grace(),
        "answered at its deadline: {abandoned:?}"
    );
}

#[test]
fn an_aborted_run_asks_no_human_and_an_answer_after_its_abort_approves_nothing() {
    let mut page = Page::with_config(Config {
        inline_confirm: true,
        abort_grace_ms: 500,
        ..Config::default()
    });
    page.register(tool("t"));
    let first = page.tm.call("t", "{}", Caller::Human, None, page.now);
    page.drain();
    let run = only_run(&mut page);
    assert_eq!(page.tm.ctx_confirm(run).as_deref(), Some("t"), "running");
    page.tm.abort(first, page.now);
    page.drain();
    assert!(page.actions.contains(&Action::Abort { run }));
    assert_eq!(page.tm.ctx_confirm(run), None, "in its grace period");
    assert!(!page.tm.ctx_confirmed(run, Some(true)));
    page.drain();
    assert_eq!(page.error_codes(), [], "no ctx_confirm_unavailable");

    page.tm.call("t", "{}", Caller::Human, None, page.now);
    page.drain();
    assert!(page.take_runs().is_empty(), "queued behind the aborted run");
    page.advance(500);
    let second = only_run(&mut page);
    assert_eq!(page.tm.ctx_confirm(run), None, "abandoned");
    assert_eq!(page.tm.ctx_confirm(second).as_deref(), Some("t"));
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

/// `handle_snapshot_taken` leaves a run that asked for no snapshot as it
/// is, abandoned or not: no `late_result` (the tool has not settled), and
/// the run's one late report is kept for its outcome. Sequence: `call a`
/// of `t` (no snapshot) → `cancel a` → the grace period ends → a
/// `SnapshotTaken` for its run → the run settles.
#[test]
fn a_snapshot_report_for_an_abandoned_run_without_a_snapshot_changes_nothing() {
    let mut page = graced_page();
    let run = cancelled_run(&mut page, "a");
    page.advance(500);
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    page.events.clear();
    page.actions.clear();
    assert!(!page.snapshot_taken(run));
    assert!(
        page.events.is_empty() && page.actions.is_empty(),
        "a snapshot report for a run that asked for none had effects: {:?}",
        page.events
    );
    page.ok(run, json!("too late"));
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::LateResult,
            "tool 't' returned after its call was abandoned".to_owned()
        )],
        "the run's own late settling is reported"
    );
}

/// A page call with `signal`, held (WebMCP's `execute`) or not (`tm.call`).
fn page_call(held: bool, signal: GivenSignal) -> PageCall {
    if held {
        PageCall::held(GivenText::Undefined, signal, false)
    } else {
        PageCall::from_given(
            GivenText::Undefined,
            &Given::Undefined,
            &Given::Undefined,
            &Given::Undefined,
            signal,
        )
        .unwrap_or_else(|refused| panic!("{refused:?}"))
    }
}

#[test]
fn a_page_call_whose_signal_had_aborted_or_whose_registration_was_withdrawn_is_cancelled_signal_with_nothing_run_or_asked(
) {
    let mut page = Page::new();
    page.register(tool("t"));
    page.register(consequential("pay"));
    page.drain();
    let events_before = page.events.len();
    // A WebMCP `execute` of a withdrawn registration, its own signal live.
    let withdrawn = PageCall::held(GivenText::Undefined, GivenSignal::Listenable, true);
    for (name, call) in [
        ("t", page_call(false, GivenSignal::Aborted)),
        ("t", page_call(true, GivenSignal::Aborted)),
        ("pay", page_call(false, GivenSignal::Aborted)),
        ("pay", page_call(true, GivenSignal::Aborted)),
        ("gone", page_call(false, GivenSignal::Aborted)),
        ("t", withdrawn.clone()),
        ("pay", withdrawn.clone()),
    ] {
        let handle = page.tm.page_call(name, &call, page.now);
        page.drain();
        assert_eq!(
            page.completed(handle),
            Some(ToolResult::Cancelled {
                by: CancelledBy::Signal
            }),
            "{name} {call:?}"
        );
    }
    assert_eq!(
        page.actions,
        [],
        "no run, validation or preparation asked for"
    );
    assert_eq!(page.tm.calls_in_flight(), 0);
    assert!(page.tm.pending_confirmations().is_empty());
    assert!(
        page.events[events_before..]
            .iter()
            .all(|event| matches!(event, Event::Completed { .. })),
        "only the completions: {:?}",
        &page.events[events_before..]
    );

    // The same calls with a live signal are made: `t` runs, `pay` waits.
    let live = GivenSignal::Listenable;
    let run = page.tm.page_call("t", &page_call(false, live), page.now);
    page.drain();
    assert_eq!(page.completed(run), None);
    let started = only_run(&mut page);
    page.ok(started, json!(1));
    assert!(page.completed(run).is_some());
    let held = page.tm.page_call("pay", &page_call(true, live), page.now);
    page.drain();
    assert_eq!(page.completed(held), None);
    assert_eq!(page.tm.pending_confirmations().len(), 1);
}
