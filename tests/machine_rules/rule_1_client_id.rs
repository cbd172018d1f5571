//! Rule 1: clientId.

use super::*;

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
