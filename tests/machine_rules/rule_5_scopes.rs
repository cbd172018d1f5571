//! Rule 5: scopes.

use super::*;

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
