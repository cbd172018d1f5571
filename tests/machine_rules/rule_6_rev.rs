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
