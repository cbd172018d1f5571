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
