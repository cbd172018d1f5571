//! Rule 4: protocol.

use super::*;

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
