//! Page calls held through a deferred confirmation (`Toolmark::call_held`,
//! what a WebMCP `execute` uses): they complete with the outcome of the
//! human's decision, never with `needs_confirmation`.
// Native only: the harness uses the regex crate (the wasm tests are tests/wasm*.rs).
#![cfg(not(target_arch = "wasm32"))]

mod support {
    pub mod harness;
}

use serde_json::json;
use support::harness::*;
use toolmark_bridge::machine::{Action, Outcome};
use toolmark_bridge::policy::Caller;
use toolmark_bridge::protocol::{CancelledBy, RefusedCode, ToolResult};

fn held(page: &mut Page, tool: &str) -> toolmark_bridge::machine::Handle {
    let handle = page.tm.call_held(tool, "{}", Caller::Inapp, page.now);
    page.drain();
    handle
}

fn pending_id(page: &Page) -> String {
    let pending = page.tm.pending_confirmations();
    assert_eq!(pending.len(), 1, "{pending:?}");
    pending[0].confirm_id.clone()
}

#[test]
fn an_approved_confirmation_completes_the_held_call_with_the_run_result() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let handle = held(&mut page, "pay");
    assert_eq!(page.completed(handle), None, "no needs_confirmation");
    assert!(page.take_runs().is_empty());
    let confirm_id = pending_id(&page);
    let approval = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].3, "human");
    page.ok(runs[0].0, json!({"paid": true}));
    let ok = Some(ToolResult::Ok {
        data: Some(json!({"paid": true}).into()),
    });
    assert_eq!(page.completed(handle), ok);
    assert_eq!(page.completed(approval), ok);
    assert!(
        page.confirmed_for(&confirm_id).is_empty(),
        "no bridge asked"
    );
    assert!(page.tm.pending_confirmations().is_empty());
}

#[test]
fn a_rejected_confirmation_completes_it_cancelled_operator() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let handle = held(&mut page, "pay");
    let confirm_id = pending_id(&page);
    page.tm.confirm(&confirm_id, false, page.now);
    page.drain();
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Cancelled {
            by: CancelledBy::Operator
        })
    );
    assert!(page.take_runs().is_empty());
}

#[test]
fn an_expired_confirmation_completes_it_refused_confirmation_expired() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let handle = held(&mut page, "pay");
    page.advance(599_999);
    assert_eq!(page.completed(handle), None);
    page.advance(1);
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused {
            code: RefusedCode::ConfirmationExpired,
            ..
        })
    ));
}

#[test]
fn aborting_while_the_confirmation_is_pending_cancels_it_and_clears_the_pending_list() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let handle = held(&mut page, "pay");
    let confirm_id = pending_id(&page);
    page.tm.abort(handle, page.now);
    page.drain();
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Cancelled {
            by: CancelledBy::Signal
        })
    );
    assert!(page.tm.pending_confirmations().is_empty());
    let late = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    assert!(matches!(
        page.completed(late),
        Some(ToolResult::Refused {
            code: RefusedCode::ConfirmationExpired,
            ..
        })
    ));
    assert!(page.take_runs().is_empty(), "never runs");
}

#[test]
fn aborting_during_the_approved_run_aborts_that_run() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let handle = held(&mut page, "pay");
    let confirm_id = pending_id(&page);
    page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let run = page.take_runs()[0].0;
    page.tm.abort(handle, page.now);
    page.drain();
    assert!(page
        .actions
        .iter()
        .any(|a| matches!(a, Action::Abort { run: r } if *r == run)));
    page.settle(run, Outcome::Aborted);
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Cancelled {
            by: CancelledBy::Signal
        })
    );
}

#[test]
fn a_tool_that_needs_no_human_answers_as_a_page_call_does() {
    let mut page = Page::new();
    page.register(tool("read"));
    let handle = held(&mut page, "read");
    let run = page.take_runs()[0].0;
    page.ok(run, json!(1));
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Ok {
            data: Some(json!(1).into())
        })
    );
}

#[test]
fn a_pending_confirmation_does_not_hold_its_scope() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.register(tool("read"));
    held(&mut page, "pay");
    let read = held(&mut page, "read");
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1, "the lane is free");
    page.ok(runs[0].0, json!(2));
    assert!(page.completed(read).is_some());
}

#[test]
fn the_33rd_call_on_a_busy_scope_is_refused_busy() {
    let mut page = Page::new();
    page.register(tool("slow"));
    let handles: Vec<_> = (0..33).map(|_| held(&mut page, "slow")).collect();
    assert!(handles[..32].iter().all(|h| page.completed(*h).is_none()));
    assert!(matches!(
        page.completed(handles[32]),
        Some(ToolResult::Refused {
            code: RefusedCode::Busy,
            ..
        })
    ));
}
