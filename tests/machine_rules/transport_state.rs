//! Transport connection state.

use super::*;

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
            json!("bridge: the transport's status (transport.status or onStatus) is not connecting, open, reconnecting or closed")
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
