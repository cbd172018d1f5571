//! A transport's connection state: the states every transport of this
//! package reports (`transport.status`, `transport.onStatus`), and what a
//! bridge makes of the states its transport reports ([`StatusWatch`]).
//!
//! # The states
//! - `connecting { attempt }`: a connection attempt is under way. `attempt`
//!   counts the tries since the transport began or since its last open
//!   connection, this one included (1 for the first).
//! - `open`: connected; messages go out at once.
//! - `closed { code?, reason, terminal }`: the connection ended (or an
//!   attempt failed), with the close code and reason when there are some;
//!   `terminal`: the transport will not connect again by itself.
//! - `reconnecting { attempt, delayMs? }`: waiting to try again; `attempt`
//!   is the number the next try will have, `delayMs` how long until it
//!   (when the transport knows).
//!
//! A WebSocket that never connects goes `connecting 1`, `closed 1006`,
//! `reconnecting 2 (500 ms)`, `connecting 2`, `closed 1006`,
//! `reconnecting 3 (1000 ms)`, …; one that drops goes `open`, `closed`,
//! `reconnecting 1`, `connecting 1`, `open`.
//!
//! # What a bridge makes of them
//! Each state reported is a `status` event; a `closed` right after
//! `connecting` (an attempt that never opened) is also an
//! `error` event `transport_failed`, so a page can tell "agent offline"
//! from "agent idle".

use serde::Serialize;

use crate::prelude::*;
use crate::vecmap::Queue;

/// The `closed` reason of a transport stopped by its `close()`.
pub const CLOSED_BY_CLOSE: &str = "closed by close()";

/// One state of a transport's connection. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Status {
    Connecting {
        attempt: u32,
    },
    Open,
    #[serde(rename_all = "camelCase")]
    Reconnecting {
        attempt: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        delay_ms: Option<u64>,
    },
    Closed {
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<u16>,
        reason: String,
        terminal: bool,
    },
}

impl Status {
    /// `closed` with this code, reason and finality.
    pub fn closed(code: Option<u16>, reason: &str, terminal: bool) -> Status {
        Status::Closed {
            code,
            reason: reason.into(),
            terminal,
        }
    }

    /// The `state` name.
    pub fn state(&self) -> &'static str {
        match self {
            Status::Connecting { .. } => "connecting",
            Status::Open => "open",
            Status::Reconnecting { .. } => "reconnecting",
            Status::Closed { .. } => "closed",
        }
    }
}

/// A transport policy's connection state now, and the states not yet told
/// (oldest first): each is queued at the transition that leads to it, and
/// the driver tells them in order ([`StatusLog::poll`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLog {
    now: Status,
    untold: Queue<Status>,
}

impl StatusLog {
    /// A log at `now`, with nothing to tell yet.
    pub fn new(now: Status) -> StatusLog {
        StatusLog {
            now,
            untold: Queue::new(),
        }
    }

    /// The state now.
    pub fn now(&self) -> &Status {
        &self.now
    }

    /// Moves to `status` and queues it to be told.
    pub fn tell(&mut self, status: Status) {
        self.now = status.clone();
        self.untold.push_back(status);
    }

    /// The oldest state not yet told.
    pub fn poll(&mut self) -> Option<Status> {
        self.untold.pop_front()
    }
}

/// The parts of a state as a transport of the app's own reports them
/// (`{ state, attempt?, delayMs?, code?, reason?, terminal? }`, read as JS
/// values: a number, a string, a boolean, else `None`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusParts {
    pub state: Option<String>,
    pub attempt: Option<f64>,
    pub delay_ms: Option<f64>,
    pub code: Option<f64>,
    pub reason: Option<String>,
    pub terminal: Option<bool>,
}

impl Status {
    /// The state these parts describe, or `None` for an unknown `state`
    /// (or none). The rest is read leniently, as a JS transport of the
    /// app's own may write it: numbers as whole numbers (a fraction
    /// truncated, out of range saturated, `NaN` 0), an `attempt` left out
    /// 0, a `reason` left out empty, a `terminal` left out false.
    pub fn from_parts(parts: StatusParts) -> Option<Status> {
        let attempt = parts.attempt.map_or(0, |n| n as u32);
        Some(match parts.state.as_deref()? {
            "connecting" => Status::Connecting { attempt },
            "open" => Status::Open,
            "reconnecting" => Status::Reconnecting {
                attempt,
                delay_ms: parts.delay_ms.map(|ms| ms as u64),
            },
            "closed" => Status::Closed {
                code: parts.code.map(|code| code as u16),
                reason: parts.reason.unwrap_or_default(),
                terminal: parts.terminal.unwrap_or(false),
            },
            _ => return None,
        })
    }
}

/// What a bridge remembers of the states its transport reported: the
/// attempt under way, if the last state was `connecting`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusWatch {
    connecting: Option<u32>,
}

impl StatusWatch {
    /// Takes the next reported state; returns the text of a
    /// `transport_failed` error event when it ends an attempt that never
    /// opened (a `closed` right after `connecting`), unless the transport's
    /// own `close()` ended it: nothing failed, the app stopped it.
    pub fn observe(&mut self, status: &Status) -> Option<String> {
        let failed = match (self.connecting, status) {
            (
                Some(attempt),
                Status::Closed {
                    code,
                    reason,
                    terminal,
                },
            ) if !(*terminal && reason == CLOSED_BY_CLOSE) => {
                Some(failed_attempt_text(attempt, *code, reason, *terminal))
            }
            _ => None,
        };
        self.connecting = match status {
            Status::Connecting { attempt } => Some(*attempt),
            _ => None,
        };
        failed
    }
}

/// `transport: connection attempt 2 failed (code 1006: reason); retrying`.
fn failed_attempt_text(attempt: u32, code: Option<u16>, reason: &str, terminal: bool) -> String {
    let mut why = String::new();
    if let Some(code) = code {
        why.push_str(" (code ");
        // (As u32: u16's own formatting is code the module has no other use for.)
        why.push_str(&u32::from(code).to_string());
    }
    if !reason.is_empty() {
        why.push_str(if why.is_empty() { " (" } else { ": " });
        why.push_str(reason);
    }
    if !why.is_empty() {
        why.push(')');
    }
    let next = if terminal { "not retrying" } else { "retrying" };
    format!("transport: connection attempt {attempt} failed{why}; {next}")
}

#[cfg(test)]
mod tests {
    use super::*;

    use Status as S;

    fn closed(code: Option<u16>, reason: &str, terminal: bool) -> Status {
        S::closed(code, reason, terminal)
    }

    #[test]
    fn a_closed_right_after_connecting_is_a_failed_attempt() {
        let mut watch = StatusWatch::default();
        assert_eq!(watch.observe(&Status::Connecting { attempt: 1 }), None);
        assert_eq!(
            watch.observe(&closed(Some(1006), "", false)).as_deref(),
            Some("transport: connection attempt 1 failed (code 1006); retrying")
        );
        let reconnecting = Status::Reconnecting {
            attempt: 2,
            delay_ms: Some(500),
        };
        assert_eq!(watch.observe(&reconnecting), None);
        assert_eq!(watch.observe(&Status::Connecting { attempt: 2 }), None);
        assert_eq!(
            watch
                .observe(&closed(None, "onOpen rejected", true))
                .as_deref(),
            Some("transport: connection attempt 2 failed (onOpen rejected); not retrying")
        );
    }

    /// The app's `close()` while an attempt is under way (a reconnect's
    /// `connecting`) ends it: told as `closed`, and no failure.
    #[test]
    fn an_attempt_ended_by_close_is_no_failure() {
        let mut watch = StatusWatch::default();
        assert_eq!(watch.observe(&Status::Connecting { attempt: 3 }), None);
        assert_eq!(
            watch.observe(&closed(Some(1000), CLOSED_BY_CLOSE, true)),
            None
        );
        assert_eq!(watch.observe(&Status::Connecting { attempt: 1 }), None);
        assert_eq!(watch.observe(&closed(None, CLOSED_BY_CLOSE, true)), None);
        // The same reason from a socket that will be retried is a failure.
        assert_eq!(watch.observe(&Status::Connecting { attempt: 1 }), None);
        assert_eq!(
            watch
                .observe(&closed(Some(1000), CLOSED_BY_CLOSE, false))
                .as_deref(),
            Some("transport: connection attempt 1 failed (code 1000: closed by close()); retrying")
        );
    }

    #[test]
    fn a_connection_that_opened_and_dropped_is_no_failure() {
        let mut watch = StatusWatch::default();
        for status in [
            Status::Connecting { attempt: 1 },
            Status::Open,
            closed(Some(1001), "going away", false),
            Status::Reconnecting {
                attempt: 1,
                delay_ms: Some(500),
            },
            Status::Connecting { attempt: 1 },
            Status::Open,
            closed(Some(1000), "", true),
            // A closed told twice: the second ends no attempt either.
            closed(Some(1000), "", true),
        ] {
            assert_eq!(watch.observe(&status), None);
        }
    }

    /// A closed state without a close code (a rejected `onOpen`, a target
    /// window gone) has no `code` field, not `code: null`.
    #[test]
    fn a_closed_state_without_a_code_has_no_code_field() {
        assert_eq!(
            serde_json::to_string(&closed(None, "onOpen rejected", true)).unwrap(),
            r#"{"state":"closed","reason":"onOpen rejected","terminal":true}"#
        );
    }

    #[test]
    fn a_failure_names_code_and_reason_when_there_are_some() {
        let text = |code, reason, terminal| failed_attempt_text(1, code, reason, terminal);
        assert_eq!(
            text(Some(4001), "unauthorized", true),
            "transport: connection attempt 1 failed (code 4001: unauthorized); not retrying"
        );
        assert_eq!(
            text(None, "", false),
            "transport: connection attempt 1 failed; retrying"
        );
    }

    #[test]
    fn an_apps_transport_states_are_read_by_their_state() {
        let parts = |state: &str| StatusParts {
            state: Some(state.into()),
            ..StatusParts::default()
        };
        assert_eq!(Status::from_parts(parts("open")), Some(Status::Open));
        assert_eq!(
            Status::from_parts(StatusParts {
                attempt: Some(3.0),
                ..parts("connecting")
            }),
            Some(Status::Connecting { attempt: 3 })
        );
        assert_eq!(
            Status::from_parts(StatusParts {
                attempt: Some(2.0),
                delay_ms: Some(1000.0),
                ..parts("reconnecting")
            }),
            Some(Status::Reconnecting {
                attempt: 2,
                delay_ms: Some(1000)
            })
        );
        assert_eq!(
            Status::from_parts(StatusParts {
                code: Some(4001.0),
                reason: Some("bye".into()),
                terminal: Some(true),
                ..parts("closed")
            }),
            Some(closed(Some(4001), "bye", true))
        );
        // The rest leniently: nothing left out or out of range fails.
        assert_eq!(
            Status::from_parts(parts("closed")),
            Some(closed(None, "", false))
        );
        assert_eq!(
            Status::from_parts(StatusParts {
                attempt: Some(f64::NAN),
                delay_ms: Some(-5.0),
                ..parts("reconnecting")
            }),
            Some(Status::Reconnecting {
                attempt: 0,
                delay_ms: Some(0)
            })
        );
        assert_eq!(
            Status::from_parts(StatusParts {
                code: Some(70000.5),
                terminal: Some(true),
                ..parts("closed")
            }),
            Some(closed(Some(u16::MAX), "", true))
        );
        for bad in [StatusParts::default(), parts("Open"), parts("")] {
            assert_eq!(Status::from_parts(bad.clone()), None, "{bad:?}");
        }
    }

    #[test]
    fn states_serialize_as_the_js_objects() {
        let json = |s: &Status| serde_json::to_string(s).unwrap();
        assert_eq!(
            json(&Status::Connecting { attempt: 1 }),
            r#"{"state":"connecting","attempt":1}"#
        );
        assert_eq!(json(&Status::Open), r#"{"state":"open"}"#);
        assert_eq!(
            json(&Status::Reconnecting {
                attempt: 2,
                delay_ms: Some(500)
            }),
            r#"{"state":"reconnecting","attempt":2,"delayMs":500}"#
        );
        assert_eq!(
            json(&Status::Reconnecting {
                attempt: 2,
                delay_ms: None
            }),
            r#"{"state":"reconnecting","attempt":2}"#
        );
        assert_eq!(
            json(&closed(Some(1006), "", false)),
            r#"{"state":"closed","code":1006,"reason":"","terminal":false}"#
        );
        for s in [
            Status::Connecting { attempt: 1 },
            Status::Open,
            closed(None, "x", true),
        ] {
            assert!(json(&s).contains(&format!(r#""state":"{}""#, s.state())));
        }
    }
}
