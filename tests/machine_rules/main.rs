//! The bridge core against the spec, rule by rule, natively with a
//! simulated clock, one file per section of the spec. Each test names the
//! rule it holds the core to.
// Native only: uses the regex crate (the wasm tests are tests/wasm.rs).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
#[path = "../support/harness.rs"]
mod harness;

use harness::*;
use serde_json::{json, Value};
use toolmark_bridge::given::{Given, GivenText};
use toolmark_bridge::machine::{
    Action, BridgeId, BridgeOptions, Config, Event, GivenSignal, OnChange, Outcome, Output,
    PageCall, PrepareOrder, Prepared, RunId, RunOrder, Unprepared, Validated,
};
use toolmark_bridge::policy::Caller;
use toolmark_bridge::protocol::{CancelledBy, ErrorEventCode, FieldChange, Issue, ToolResult};
use toolmark_bridge::registry::{SchemaSpec, ScopeId, ScopeMade};

fn only_run(page: &mut Page) -> toolmark_bridge::machine::RunId {
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].0
}

/// The `Prepare` the page was asked for last.
fn take_prepare(page: &mut Page) -> PrepareOrder {
    match page.actions.pop() {
        Some(Action::Prepare(order)) => order,
        other => panic!("prepare expected: {other:?}, then {:?}", page.actions),
    }
}

/// Answers the run's `Prepare` with `summary` as its `summary()`'s text.
fn answer_summary(page: &mut Page, run: RunId, summary: &str) {
    page.tm.handle_prepared(
        run,
        Ok(Prepared {
            summary: Some(summary.into()),
            ..Prepared::default()
        }),
        page.now,
    );
    page.drain();
}

/// The names of the tools `inapp` sees, in the manifest's order.
fn inapp_names(page: &Page) -> Vec<String> {
    page.tm
        .manifest(Caller::Inapp)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// A `needs_confirmation` result's `confirmId`.
fn confirm_id_of(result: &Value) -> String {
    assert_eq!(result["status"], "needs_confirmation", "{result}");
    result["confirmId"].as_str().unwrap_or_default().to_owned()
}

mod cancel;
mod describe;
mod manifest;
mod registry_and_policy;
mod results;
mod rule_1_client_id;
mod rule_2_exactly_once;
mod rule_4_protocol;
mod rule_5_scopes;
mod rule_6_rev;
mod rule_7_confirmation;
mod rule_8_hostile_input;
mod transport_state;
