//! The postMessage transport's policy (iframes, extensions): which origins
//! are acceptable, which inbound events reach the bridge, and what goes out.
//!
//! # What it decides
//! - **At construction** ([`PostMessagePolicy::new`]): `targetOrigin` and
//!   every `allowedOrigins` entry must be a serialized origin
//!   `scheme://host[:port]` exactly as a browser writes it
//!   ([`super::origin`]): `'*'` and `'null'` are refused, and so is anything
//!   with a path, query, fragment, trailing slash, userinfo, a missing
//!   scheme or host, upper case or a default port. `allowedOrigins` must
//!   not be empty.
//! - **Inbound** ([`Sender`]): an event is accepted only when the browser
//!   delivered it (not a script's `dispatchEvent`, whose `source` and
//!   `origin` are whatever that script wrote: in an extension's content
//!   script, the page's own scripts share the window), its source is the
//!   target window, its `origin` is exactly (string equality) one of the
//!   allowed, and its data is the envelope `{ "toolmark": 1, "message": … }`;
//!   the bridge gets the `message`. Anything else is ignored silently.
//! - **Its own posts** ([`echoes_own_post`]): a transport whose target is
//!   the very window it listens on (an extension's content script and its
//!   page share one window; `window.parent` of a top-level page) hears
//!   every envelope it posts. Such a transport ignores page → agent
//!   messages (`manifest`, `changed`, `result`, `confirmed`): they are its
//!   own posts, or another page-side bridge's on that window, never the
//!   agent's. A transport with another target reads them as before (the
//!   bridge reports them as travelling the wrong way).
//! - **Outbound**: the envelope around the message, posted with the exact
//!   `targetOrigin`.
//!
//! - **Connection state** ([`PostMessagePolicy::status`]): postMessage has
//!   no connection, so the transport is `open` from the start until
//!   `close()`, or until the target window is found closed (checked before
//!   each send, and every [`TARGET_CHECK_MS`] while someone watches the
//!   state: [`PostMessagePolicy::next_check`]); both end in a terminal
//!   `closed`, and a send after the target closed fails with its own text.
//!
//! # What the driver does
//! On each `message` event: [`PostMessagePolicy::accepts_sender`] with
//! `event.isTrusted`, `event.source === target` and `event.origin` first, so the data of a
//! foreign sender is never read or copied; then the envelope. The envelope
//! rule is [`EnvelopeShape::holds`], over what a driver read of the JS
//! value, so that only `message` is copied (or [`open_envelope`] on a
//! [`serde_json::Value`]). The message is then handed to the bridge as JSON text.
//! To send: [`PostMessagePolicy::outbound`] gives the envelope (as text, to
//! `JSON.parse` once, or as a value) and the target origin for
//! `target.postMessage(envelope, targetOrigin)`.

use crate::prelude::*;
use serde_json::{Map, Value};

use super::origin::{parse_serialized_origin, OriginError};
use super::status::{Status, StatusLog, CLOSED_BY_CLOSE};
use crate::given::{Given, GivenList};
use crate::protocol::ThrownErrorCode;

/// Who a `message` event says sent it, as the driver reads the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sender<'a> {
    /// `event.isTrusted` is not `false`: the browser delivered the event
    /// (a window posted it). A script's `dispatchEvent` makes an untrusted
    /// one, with any `source` and `origin` it likes. A host whose events
    /// have no `isTrusted` (a test's fake window) counts as delivering.
    pub delivered: bool,
    /// `event.source === target`.
    pub from_target: bool,
    /// `event.origin`, compared by exact string.
    pub origin: &'a str,
}

/// The value of the envelope's `toolmark` key.
pub const ENVELOPE_VERSION: u64 = 1;

/// A bad `postMessageTransport` option; [`ConfigError::message`] is the
/// `TypeError` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `target` has no `postMessage`.
    Target,
    /// `targetOrigin` is `'*'`.
    TargetWildcard,
    /// `targetOrigin` is not a serialized origin.
    TargetOrigin { value: String, error: OriginError },
    /// `allowedOrigins` is not a non-empty array.
    AllowedOriginsEmpty,
    /// An `allowedOrigins` entry is `'*'` or `'null'`.
    AllowedRefused { value: String },
    /// An `allowedOrigins` entry is not a serialized origin (the driver
    /// passes a non-string entry as its `JSON.stringify`).
    AllowedOrigin { value: String, error: OriginError },
    /// `source` is not an event target.
    Source,
}

fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

impl ConfigError {
    /// The code `postMessageTransport` throws with: every refusal is of an
    /// option the caller gave.
    pub fn thrown_code(&self) -> ThrownErrorCode {
        ThrownErrorCode::InvalidArgument
    }

    /// The error text, as the JS transport has it, with the reason added.
    pub fn message(&self) -> String {
        match self {
            ConfigError::Target => {
                "postMessageTransport: target must have postMessage (a window)".into()
            }
            ConfigError::TargetWildcard => {
                "postMessageTransport: targetOrigin '*' is not allowed; give the exact origin".into()
            }
            ConfigError::TargetOrigin { value, error } => format!(
                "postMessageTransport: targetOrigin must be a serialized origin scheme://host[:port], not {} ({})",
                quoted(value),
                error.reason()
            ),
            ConfigError::AllowedOriginsEmpty => {
                "postMessageTransport: allowedOrigins must be a non-empty array of origins".into()
            }
            ConfigError::AllowedRefused { value } => format!(
                "postMessageTransport: {} is not allowed in allowedOrigins",
                quoted(value)
            ),
            ConfigError::AllowedOrigin { value, error } => format!(
                "postMessageTransport: allowedOrigins entry must be a serialized origin scheme://host[:port], not {} ({})",
                quoted(value),
                error.reason()
            ),
            ConfigError::Source => {
                "postMessageTransport: source must be an event target (window)".into()
            }
        }
    }
}

/// How often a watched transport checks whether its target window closed.
pub const TARGET_CHECK_MS: u64 = 1000;
/// The `closed` reason once the target window is found closed.
pub const TARGET_CLOSED: &str = "the target window closed";

/// [`PostMessagePolicy::outbound`] after [`PostMessagePolicy::close`], or
/// after the target window closed (`target_closed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendAfterClose {
    pub target_closed: bool,
}

impl SendAfterClose {
    /// The code `send` throws with, whichever way the transport stopped.
    pub fn thrown_code(self) -> ThrownErrorCode {
        ThrownErrorCode::TransportClosed
    }

    pub fn message(self) -> &'static str {
        if self.target_closed {
            "postMessageTransport: the target window closed"
        } else {
            "postMessageTransport: closed"
        }
    }
}

/// What an accepted `event.data` looks like, for a driver that checks it on
/// the JS value ([`EnvelopeShape::holds`]) and for [`open_envelope`].
pub struct EnvelopeShape;

impl EnvelopeShape {
    pub const VERSION_KEY: &'static str = "toolmark";
    pub const MESSAGE_KEY: &'static str = "message";

    /// An envelope is a plain object (not `null`, not an array) whose own
    /// `toolmark` property is the number [`ENVELOPE_VERSION`] (`version`: that property as a
    /// number, `None` when it is absent or no number) and which has an own
    /// `message` property, whatever its value.
    pub fn holds(plain_object: bool, version: Option<f64>, has_message: bool) -> bool {
        // The number 1 in any JSON spelling (1, 1.0), as JS `=== 1` sees it.
        #[allow(clippy::cast_precision_loss)]
        let one = ENVELOPE_VERSION as f64;
        plain_object && version == Some(one) && has_message
    }
}

/// The message inside an envelope, or `None` when `data` is not one.
pub fn open_envelope(data: &Value) -> Option<&Value> {
    let object = data.as_object()?;
    let version = object
        .get(EnvelopeShape::VERSION_KEY)
        .and_then(Value::as_f64);
    let message = object.get(EnvelopeShape::MESSAGE_KEY)?;
    EnvelopeShape::holds(true, version, true).then_some(message)
}

/// Whether an accepted envelope's message is one the transport itself (or
/// another page-side bridge) posted, and so not for the bridge: on a
/// transport `to_own_window` (its target is the window it listens on), a
/// message whose `type` is a page → agent one. See the module docs.
pub fn echoes_own_post(to_own_window: bool, message_type_name: Option<&str>) -> bool {
    // The page → agent types of `protocol::message`'s table, by name: the
    // table with its property lists would cost this module about 900 bytes.
    to_own_window
        && matches!(
            message_type_name,
            Some("manifest" | "changed" | "result" | "confirmed")
        )
}

/// An envelope to post.
#[derive(Debug, Clone, PartialEq)]
pub struct Outbound<'a> {
    /// `{"toolmark":1,"message":…}` as JSON text.
    pub envelope: String,
    /// The exact `targetOrigin` argument of `postMessage`.
    pub target_origin: &'a str,
}

/// The policy of one `postMessageTransport`. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostMessagePolicy {
    target_origin: String,
    allowed: Vec<String>,
    /// Why sends fail, once stopped.
    stopped: Option<SendAfterClose>,
    status: StatusLog,
}

/// `postMessageTransport`'s options, by their JS types. An origin is read
/// as its text: a string as it is, anything else as its `JSON.stringify`
/// (which is never a serialized origin).
#[derive(Debug, Clone, PartialEq)]
pub struct PostMessageOptions {
    /// `target.postMessage`.
    pub target_post_message: Given,
    pub target_origin: String,
    pub allowed_origins: GivenList<String>,
    /// `options.source`.
    pub source: Given,
    /// `addEventListener` and `removeEventListener` of `options.source`.
    pub source_listens: [Given; 2],
    /// The same of the host's global object.
    pub global_listens: [Given; 2],
}

/// Where a transport listens for `message` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageSource {
    /// `options.source`.
    Given,
    /// The host's global object, when `options.source` is `undefined`.
    Global,
}

impl PostMessagePolicy {
    /// Checks the options, each in turn: `target` with a `postMessage`
    /// method, `targetOrigin` and `allowedOrigins` ([`Self::new`]; an
    /// `allowedOrigins` that is not an array is an empty one), then the
    /// source (`options.source`, else the host's global object) with
    /// `addEventListener` and `removeEventListener` methods.
    pub fn from_options(
        options: &PostMessageOptions,
    ) -> Result<(Self, MessageSource), ConfigError> {
        if !matches!(options.target_post_message, Given::Function) {
            return Err(ConfigError::Target);
        }
        let allowed: &[String] = match &options.allowed_origins {
            GivenList::Items(origins) => origins,
            GivenList::Undefined | GivenList::NotList => &[],
        };
        let policy = PostMessagePolicy::new(&options.target_origin, allowed)?;
        let (source, listens) = match options.source {
            Given::Undefined => (MessageSource::Global, &options.global_listens),
            _ => (MessageSource::Given, &options.source_listens),
        };
        if !listens
            .iter()
            .all(|method| matches!(method, Given::Function))
        {
            return Err(ConfigError::Source);
        }
        Ok((policy, source))
    }

    /// Checks `targetOrigin` and `allowedOrigins` (see the module docs).
    pub fn new<S: AsRef<str>>(
        target_origin: &str,
        allowed_origins: &[S],
    ) -> Result<Self, ConfigError> {
        match parse_serialized_origin(target_origin) {
            Ok(_) => {}
            Err(OriginError::Wildcard) => return Err(ConfigError::TargetWildcard),
            Err(error) => {
                return Err(ConfigError::TargetOrigin {
                    value: target_origin.into(),
                    error,
                })
            }
        }
        if allowed_origins.is_empty() {
            return Err(ConfigError::AllowedOriginsEmpty);
        }
        let mut allowed = Vec::with_capacity(allowed_origins.len());
        for origin in allowed_origins {
            let origin = origin.as_ref();
            match parse_serialized_origin(origin) {
                Ok(_) => {}
                Err(OriginError::Wildcard | OriginError::Null) => {
                    return Err(ConfigError::AllowedRefused {
                        value: origin.into(),
                    })
                }
                Err(error) => {
                    return Err(ConfigError::AllowedOrigin {
                        value: origin.into(),
                        error,
                    })
                }
            }
            if !allowed.iter().any(|o: &String| o == origin) {
                allowed.push(origin.to_owned());
            }
        }
        Ok(PostMessagePolicy {
            target_origin: target_origin.into(),
            allowed,
            stopped: None,
            status: StatusLog::new(Status::Open),
        })
    }

    /// The checked `targetOrigin`.
    pub fn target_origin(&self) -> &str {
        &self.target_origin
    }

    /// The checked `allowedOrigins`, duplicates removed.
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed
    }

    /// Whether an event from this sender may be read; never after
    /// [`PostMessagePolicy::close`].
    pub fn accepts_sender(&self, sender: &Sender) -> bool {
        !self.is_closed()
            && sender.delivered
            && sender.from_target
            && self.allowed.iter().any(|o| o == sender.origin)
    }

    /// The whole inbound rule: the message to hand to the bridge, or `None`
    /// (ignore the event silently).
    pub fn accept<'a>(&self, sender: &Sender, data: &'a Value) -> Option<&'a Value> {
        if !self.accepts_sender(sender) {
            return None;
        }
        open_envelope(data)
    }

    /// The envelope around `message_json` (the bridge's outbound JSON text,
    /// inserted as is) and the target origin.
    pub fn outbound(&self, message_json: &str) -> Result<Outbound<'_>, SendAfterClose> {
        self.check_send()?;
        let mut envelope = String::with_capacity(message_json.len() + 26);
        envelope.push_str("{\"toolmark\":1,\"message\":");
        envelope.push_str(message_json);
        envelope.push('}');
        Ok(Outbound {
            envelope,
            target_origin: &self.target_origin,
        })
    }

    /// The envelope as a value, for a driver that posts values.
    pub fn outbound_value(&self, message: Value) -> Result<(Value, &str), SendAfterClose> {
        self.check_send()?;
        let mut envelope = Map::new();
        envelope.insert(
            EnvelopeShape::VERSION_KEY.into(),
            Value::from(ENVELOPE_VERSION),
        );
        envelope.insert(EnvelopeShape::MESSAGE_KEY.into(), message);
        Ok((Value::Object(envelope), &self.target_origin))
    }

    /// Whether a message may go out now.
    pub fn check_send(&self) -> Result<(), SendAfterClose> {
        self.stopped.map_or(Ok(()), Err)
    }

    /// Stops once, told as a terminal `closed` with `reason`.
    fn stop(&mut self, target_closed: bool, reason: &str) {
        if self.stopped.is_none() {
            self.stopped = Some(SendAfterClose { target_closed });
            self.status.tell(Status::closed(None, reason, true));
        }
    }

    /// Stops sending and accepting. The driver removes its listeners.
    pub fn close(&mut self) {
        self.stop(false, CLOSED_BY_CLOSE);
    }

    /// The target window was found closed (`target.closed`): stops as
    /// [`PostMessagePolicy::close`] does, with its own reason.
    pub fn handle_target_closed(&mut self) {
        self.stop(true, TARGET_CLOSED);
    }

    /// The connection state now.
    pub fn status(&self) -> &Status {
        self.status.now()
    }

    /// The state to tell, once.
    pub fn poll_status(&mut self) -> Option<Status> {
        self.status.poll()
    }

    /// When the transport checks its target next: only a window (a target
    /// with a boolean `closed`) whose state an `onStatus` subscriber
    /// `watched`, and never once closed. A send checks it besides.
    pub fn next_check(&self, now: u64, watched: bool, window: bool) -> Option<u64> {
        (watched && window && !self.is_closed()).then(|| now.saturating_add(TARGET_CHECK_MS))
    }

    pub fn is_closed(&self) -> bool {
        self.stopped.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PARENT: &str = "https://parent.example";

    fn policy() -> PostMessagePolicy {
        PostMessagePolicy::new(PARENT, &[PARENT, "http://localhost:3000"]).unwrap()
    }

    /// Options with every one valid, listening on the host's global object.
    fn options() -> PostMessageOptions {
        PostMessageOptions {
            target_post_message: Given::Function,
            target_origin: PARENT.into(),
            allowed_origins: GivenList::Items(vec![PARENT.into(), "http://localhost:3000".into()]),
            source: Given::Undefined,
            source_listens: [Given::Undefined, Given::Undefined],
            global_listens: [Given::Function, Given::Function],
        }
    }

    #[test]
    fn options_are_checked_by_their_js_types_in_order() {
        assert_eq!(
            PostMessagePolicy::from_options(&options()).unwrap(),
            (policy(), MessageSource::Global)
        );
        let given = PostMessageOptions {
            source: Given::Other,
            source_listens: [Given::Function, Given::Function],
            global_listens: [Given::Undefined, Given::Undefined],
            ..options()
        };
        assert_eq!(
            PostMessagePolicy::from_options(&given).unwrap(),
            (policy(), MessageSource::Given)
        );
        let refused = |change: fn(&mut PostMessageOptions)| {
            let mut options = options();
            change(&mut options);
            PostMessagePolicy::from_options(&options).unwrap_err()
        };
        assert_eq!(
            refused(|o| o.target_post_message = Given::Undefined),
            ConfigError::Target
        );
        assert_eq!(
            refused(|o| o.target_post_message = Given::Other),
            ConfigError::Target
        );
        // Not an array: as an empty one.
        for allowed in [
            GivenList::NotList,
            GivenList::Undefined,
            GivenList::Items(vec![]),
        ] {
            let mut options = options();
            options.allowed_origins = allowed;
            assert_eq!(
                PostMessagePolicy::from_options(&options).unwrap_err(),
                ConfigError::AllowedOriginsEmpty
            );
        }
        // `options.source` given: its own methods, not the global's.
        assert_eq!(refused(|o| o.source = Given::Null), ConfigError::Source);
        assert_eq!(
            refused(|o| o.global_listens[1] = Given::Other),
            ConfigError::Source
        );
        // The target and the origins are told before the source.
        let first = refused(|o| {
            o.target_origin = "*".into();
            o.source = Given::Null;
        });
        assert_eq!(first, ConfigError::TargetWildcard);
        for error in [first, ConfigError::Target, ConfigError::Source] {
            assert_eq!(error.thrown_code(), ThrownErrorCode::InvalidArgument);
        }
    }

    #[test]
    fn a_wildcard_target_origin_is_refused() {
        let err = PostMessagePolicy::new("*", &[PARENT]).unwrap_err();
        assert_eq!(err, ConfigError::TargetWildcard);
        assert_eq!(
            err.message(),
            "postMessageTransport: targetOrigin '*' is not allowed; give the exact origin"
        );
    }

    #[test]
    fn a_target_origin_that_is_not_serialized_is_refused_with_the_reason() {
        for (bad, reason) in [
            ("null", "'null' is the opaque origin"),
            ("https://parent.example/", "path or a trailing slash"),
            ("https://parent.example/app", "path or a trailing slash"),
            ("https://parent.example?x=1", "query"),
            ("https://parent.example#top", "fragment"),
            ("https://me@parent.example", "userinfo"),
            ("parent.example", "no scheme://"),
            ("https://", "no host"),
            ("https://parent.example:443", "serialized form"),
        ] {
            let err = PostMessagePolicy::new(bad, &[PARENT]).unwrap_err();
            let text = err.message();
            assert!(
                text.starts_with(&format!(
                    "postMessageTransport: targetOrigin must be a serialized origin scheme://host[:port], not \"{bad}\" ("
                )),
                "{text}"
            );
            assert!(text.contains(reason), "{text}");
        }
    }

    #[test]
    fn allowed_origins_must_be_a_non_empty_list_of_serialized_origins() {
        let none: [&str; 0] = [];
        assert_eq!(
            PostMessagePolicy::new(PARENT, &none).unwrap_err().message(),
            "postMessageTransport: allowedOrigins must be a non-empty array of origins"
        );
        for refused in ["*", "null"] {
            let err = PostMessagePolicy::new(PARENT, &[PARENT, refused]).unwrap_err();
            assert_eq!(
                err.message(),
                format!("postMessageTransport: \"{refused}\" is not allowed in allowedOrigins")
            );
        }
        for bad in [
            "https://parent.example/",
            "https://parent.example/path",
            "https://parent.example?q",
            "https://parent.example#f",
            "https://u:p@parent.example",
            "parent.example",
            "https://",
            "HTTPS://PARENT.EXAMPLE",
            "https://*.example",
        ] {
            let err = PostMessagePolicy::new(PARENT, &[bad]).unwrap_err();
            assert!(matches!(err, ConfigError::AllowedOrigin { .. }), "{bad}");
            assert!(err.message().starts_with(
                "postMessageTransport: allowedOrigins entry must be a serialized origin scheme://host[:port], not "
            ));
        }
        assert!(ConfigError::Target
            .message()
            .contains("target must have postMessage"));
        assert!(ConfigError::Source
            .message()
            .contains("source must be an event target"));
    }

    #[test]
    fn extension_origins_are_accepted() {
        let p = PostMessagePolicy::new(
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
            &[
                "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
                PARENT,
                PARENT,
            ],
        )
        .unwrap();
        assert_eq!(p.allowed_origins().len(), 2);
        // Firefox's and Safari's: a UUID, lower case as WebKit writes
        // `event.origin`; Safari's `runtime.getURL` spelling never matches.
        for origin in [
            "moz-extension://1b8e3a50-0c2d-4f4e-9a7b-2f6c1d0e9a11",
            "safari-web-extension://2ab33852-d69b-4ed6-99ad-a4839dfec7ed",
        ] {
            assert!(
                PostMessagePolicy::new(origin, &[origin]).is_ok(),
                "{origin}"
            );
        }
        let upper = "safari-web-extension://2AB33852-D69B-4ED6-99AD-A4839DFEC7ED";
        assert!(PostMessagePolicy::new(PARENT, &[upper])
            .is_err_and(|e| e.message().contains("not in serialized form")));
    }

    /// A delivered event's sender.
    fn from(from_target: bool, origin: &str) -> Sender<'_> {
        Sender {
            delivered: true,
            from_target,
            origin,
        }
    }

    #[test]
    fn an_event_a_script_dispatched_is_never_read_whatever_source_and_origin_it_claims() {
        let p = policy();
        let data = json!({"toolmark": 1, "message": {"protocol": 1, "type": "call"}});
        let dispatched = Sender {
            delivered: false,
            ..from(true, PARENT)
        };
        assert!(!p.accepts_sender(&dispatched));
        assert_eq!(p.accept(&dispatched, &data), None);
        assert!(p.accepts_sender(&from(true, PARENT)));
    }

    #[test]
    fn inbound_needs_the_target_an_allowed_origin_and_the_envelope() {
        let p = policy();
        let data = json!({"toolmark": 1, "message": {"protocol": 1, "type": "call"}});
        assert_eq!(
            p.accept(&from(true, PARENT), &data),
            Some(&json!({"protocol": 1, "type": "call"}))
        );
        assert!(p
            .accept(&from(true, "http://localhost:3000"), &data)
            .is_some());
        // Another window with an allowed origin.
        assert_eq!(p.accept(&from(false, PARENT), &data), None);
        // Near misses of the origin: exact strings only.
        for origin in [
            "https://parent.example/",
            "https://PARENT.example",
            "https://parent.example:443",
            "http://parent.example",
            "https://evil.parent.example",
            "https://parent.example.evil",
            "null",
            "",
        ] {
            assert_eq!(p.accept(&from(true, origin), &data), None, "{origin}");
        }
    }

    #[test]
    fn only_the_envelope_is_accepted() {
        let p = policy();
        for bad in [
            json!({"protocol": 1, "type": "call"}),
            json!({"toolmark": 2, "message": {}}),
            json!({"toolmark": "1", "message": {}}),
            json!({"toolmark": true, "message": {}}),
            json!({"toolmark": 1}),
            json!({"message": {}}),
            json!([1, {}]),
            json!(null),
            json!("{\"toolmark\":1,\"message\":{}}"),
        ] {
            assert_eq!(p.accept(&from(true, PARENT), &bad), None, "{bad}");
        }
        // The message itself is not checked here: the bridge does that.
        assert_eq!(
            p.accept(
                &from(true, PARENT),
                &json!({"toolmark": 1.0, "message": null})
            ),
            Some(&json!(null))
        );
        assert_eq!(
            open_envelope(&json!({"toolmark": 1, "message": 7, "x": 1})),
            Some(&json!(7))
        );
    }

    #[test]
    fn the_envelope_rule_is_one_for_js_values_and_json() {
        assert!(EnvelopeShape::holds(true, Some(1.0), true));
        for (plain, version, message) in [
            (false, Some(1.0), true),
            (true, None, true),
            (true, Some(2.0), true),
            (true, Some(f64::NAN), true),
            (true, Some(1.0), false),
        ] {
            assert!(!EnvelopeShape::holds(plain, version, message));
        }
    }

    #[test]
    fn a_transport_posting_to_its_own_window_ignores_page_to_agent_messages() {
        for page_to_agent in ["manifest", "changed", "result", "confirmed"] {
            assert!(
                echoes_own_post(true, Some(page_to_agent)),
                "{page_to_agent}"
            );
            // Another target: the bridge hears of them, as before.
            assert!(!echoes_own_post(false, Some(page_to_agent)));
        }
        for agent_to_page in ["call", "describe", "cancel"] {
            assert!(!echoes_own_post(true, Some(agent_to_page)));
        }
        // The protocol's own list of page → agent types.
        for name in [
            "manifest",
            "changed",
            "result",
            "confirmed",
            "call",
            "describe",
            "cancel",
        ] {
            let to_agent =
                crate::protocol::message::message_type(name).is_some_and(|(direction, _)| {
                    direction == crate::protocol::codes::Direction::ToAgent
                });
            assert_eq!(echoes_own_post(true, Some(name)), to_agent, "{name}");
        }
        // Anything else is the bridge's to judge.
        for other in [None, Some("Manifest"), Some(""), Some("other")] {
            assert!(!echoes_own_post(true, other), "{other:?}");
        }
    }

    #[test]
    fn outbound_is_the_envelope_for_the_exact_target() {
        let p = policy();
        let out = p
            .outbound(r#"{"protocol":1,"type":"changed","clientId":"c","rev":2}"#)
            .unwrap();
        assert_eq!(out.target_origin, PARENT);
        let parsed: Value = serde_json::from_str(&out.envelope).unwrap();
        assert_eq!(
            parsed,
            json!({"toolmark": 1, "message": {"protocol": 1, "type": "changed", "clientId": "c", "rev": 2}})
        );
        assert_eq!(open_envelope(&parsed), Some(&parsed["message"]));
        let (value, target) = p.outbound_value(json!({"a": 1})).unwrap();
        assert_eq!(value.to_string(), r#"{"toolmark":1,"message":{"a":1}}"#);
        assert_eq!(target, PARENT);
    }

    #[test]
    fn after_close_nothing_is_sent_or_accepted() {
        let mut p = policy();
        assert!(!p.is_closed());
        assert_eq!(p.target_origin(), PARENT, "what the driver posts to");
        p.close();
        assert!(p.is_closed());
        let closed = SendAfterClose {
            target_closed: false,
        };
        assert_eq!(p.outbound("{}"), Err(closed));
        assert_eq!(p.outbound_value(json!({})), Err(closed));
        assert_eq!(closed.message(), "postMessageTransport: closed");
        assert_eq!(closed.thrown_code(), ThrownErrorCode::TransportClosed);
        assert!(!p.accepts_sender(&from(true, PARENT)));
    }
    #[test]
    fn open_until_closed_and_closed_is_terminal_and_told_once() {
        let mut p = policy();
        assert_eq!(p.status(), &Status::Open);
        assert_eq!(p.poll_status(), None);
        assert_eq!(p.next_check(5, true, true), Some(5 + TARGET_CHECK_MS));
        // Unwatched, or a target that is no window: never checked.
        assert_eq!(p.next_check(5, false, true), None);
        assert_eq!(p.next_check(5, true, false), None);
        p.close();
        p.close();
        p.handle_target_closed();
        let closed = Status::Closed {
            code: None,
            reason: CLOSED_BY_CLOSE.into(),
            terminal: true,
        };
        assert_eq!(p.poll_status(), Some(closed.clone()));
        assert_eq!(p.poll_status(), None);
        assert_eq!(p.status(), &closed);
        assert_eq!(p.next_check(5, true, true), None);
    }

    #[test]
    fn a_target_found_closed_stops_the_transport_with_its_own_text() {
        let mut p = policy();
        p.handle_target_closed();
        assert_eq!(
            p.poll_status(),
            Some(Status::Closed {
                code: None,
                reason: TARGET_CLOSED.into(),
                terminal: true
            })
        );
        assert!(!p.accepts_sender(&from(true, PARENT)));
        let error = p.outbound("{}").unwrap_err();
        assert_eq!(
            error.message(),
            "postMessageTransport: the target window closed"
        );
        assert_eq!(error.thrown_code(), ThrownErrorCode::TransportClosed);
    }
}
