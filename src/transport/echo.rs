//! The Echo transport's policy (Laravel Echo in, HTTP POST out): where the
//! POST may go, what a broadcast payload carries, what the request looks
//! like, and what counts as a failed send.
//!
//! # What it decides
//! - **`postUrl` is same-origin with the page** ([`resolve_post_url`]):
//!   resolved against the page URL (`location.href`) as the URL standard
//!   does for the cases that matter — ASCII tab and newline removed,
//!   leading and trailing spaces and controls trimmed, `\` read as `/`,
//!   any number of slashes after `//` skipped — a relative reference
//!   (`/path`, `path`, `?q`, `#f`, empty) is same-origin; an absolute URL
//!   must have the page's scheme, host (ASCII, compared case-insensitively)
//!   and port (the default port and leading zeros normalized); a
//!   protocol-relative `//host/x` takes the page's scheme and must name the
//!   page's host and port. Refused: another origin; userinfo (`user@`: it
//!   also hides the real host, and fetch refuses it); a host that is not
//!   plain ASCII (`%`-escapes, Unicode: compare the page's own spelling);
//!   a page whose origin is opaque (not `http(s)`). Also refused, where the
//!   JS would accept them: `https:path` and `https:/path` (the page's scheme
//!   without `//`, which the URL standard reads as relative; write `/path`).
//!   The result is an absolute URL on the page's origin, so a `<base href>`
//!   cannot move the request elsewhere. Minimal parsing, not the `url`
//!   crate: see [`super::origin`] for its size.
//! - **Broadcast payloads** ([`unwrap_payload`], [`is_wrapped`]): the message itself, or
//!   `{ message }`: a plain object with an own `message` key and no
//!   `protocol` key is unwrapped (no protocol message has a `message` key;
//!   every one has `protocol`), anything else is the message.
//! - **The request** ([`EchoPolicy::request`]): `POST` to the resolved URL,
//!   `credentials: 'same-origin'`, `redirect: 'error'` (a redirect must not
//!   carry the body elsewhere), headers `Content-Type: application/json`,
//!   `Accept: application/json`, `X-Requested-With: XMLHttpRequest`, then
//!   the app's `headers()` (read by the driver on every send). As in the
//!   JS (an object spread after the fixed three), an app header replaces a
//!   fixed one of the same name; here the names compare case-insensitively
//!   (the JS replaced only the same spelling and let fetch join the values
//!   of another spelling). A header name that is not an HTTP token or a
//!   value with CR, LF or NUL fails the send before any request, as fetch
//!   would throw.
//! - **Send failures** ([`response_outcome`]): a network error (fetch
//!   rejected, a redirect included) or a status outside 200–299 is a
//!   [`SendFailure`]: the bridge reports it as `transport_failed`.
//!
//! - **Connection state** ([`EchoPolicy::status`]): from Echo's own
//!   reports, as [`EchoConnection`] names them and as the channel's
//!   `subscribed` and `error` callbacks tell: `connecting` until the
//!   private channel is subscribed, then `open`; a connection Echo reports
//!   lost or failed is `closed` (not terminal: Echo connects again by
//!   itself), its next try `connecting` with the attempt number; one Echo
//!   reports disconnected is `closed`, terminal (Pusher is disconnected only
//!   by the app's `disconnect()` or a server that refused the connection, a
//!   4000–4099 code, and does not connect again by itself; when the app
//!   connects it again, that try is told as `connecting`; a Pusher not
//!   started yet, `initialized`, which Echo also names disconnected, is
//!   left `connecting`, [`EchoConnection::first`]); a
//!   refused subscription (the server's channel authorization) is `closed`
//!   with the HTTP status as its code, terminal (Echo does not ask again by
//!   itself; it does when its connection comes back, and a subscription
//!   then is told as `open`); `close()` is `closed`, terminal. Echo does not say when it will try again, so there is no
//!   `reconnecting` state.
//!
//! # What the driver does
//! At construction: type checks of `echo`, `headers` and `fetch`
//! ([`ConfigError`] has their texts), then [`EchoPolicy::new`] with
//! `location.href` (`None` where there is no location: Node, tests), then
//! `echo.private(channel)`. Every broadcast on the event: unwrap it and
//! hand the message to the bridge. Every send: call `headers()`, build the
//! request, `fetch` it, map the response with [`response_outcome`]. On
//! close: stop listening, and leave [`EchoPolicy::leave_channel_name`]
//! when [`ChannelHolds::release`] says this transport is the last holding
//! a channel a transport joined.

use crate::prelude::*;
use serde_json::Value;

use super::origin::{check_host, default_port, is_scheme, parse_port, split_host_port};
use super::status::{Status, StatusLog, CLOSED_BY_CLOSE};
use crate::given::{optional_function, Given};
use crate::protocol::{ErrorEventCode, ThrownErrorCode, ToolmarkErrorCode};

/// The event listened for when `event` is left out.
pub const DEFAULT_EVENT: &str = ".toolmark.message";
/// The POST target when `postUrl` is left out.
pub const DEFAULT_POST_URL: &str = "/toolmark/bridge";

/// The three fixed request headers, in order.
pub const FIXED_HEADERS: [(&str, &str); 3] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json"),
    ("X-Requested-With", "XMLHttpRequest"),
];

/// Why a `postUrl` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostUrlError {
    /// The page URL is not `http(s)://host…`: its origin is opaque (or it
    /// is not a URL), and an opaque origin is the same as nothing.
    OpaquePage,
    /// Not a URL this policy can place (a bad port, a bad host, userinfo,
    /// an empty host, `scheme:` without `//`).
    Invalid(&'static str),
    /// A URL on another origin (serialized here).
    CrossOrigin { origin: String },
}

/// A bad `echoTransport` option; [`ConfigError::message`] is the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `echo` has no `private` method.
    Echo,
    Channel,
    Event,
    /// `postUrl` is neither a string nor a `URL`.
    PostUrlType,
    /// `headers` is given and not a function.
    Headers,
    /// `fetch` is given and not a function.
    Fetch,
    PostUrl {
        post_url: String,
        page_origin: Option<String>,
        error: PostUrlError,
    },
}

fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

impl ConfigError {
    /// The code `echoTransport` throws with: every refusal is of an option
    /// the caller gave.
    pub fn thrown_code(&self) -> ThrownErrorCode {
        ThrownErrorCode::InvalidArgument
    }

    /// The error text, as the JS transport has it (with the reason added
    /// for an invalid `postUrl`).
    pub fn message(&self) -> String {
        match self {
            ConfigError::Echo => "echoTransport: echo must be a Laravel Echo instance".into(),
            ConfigError::Channel => "echoTransport: channel must be a non-empty string".into(),
            ConfigError::Event => "echoTransport: event must be a non-empty string".into(),
            ConfigError::PostUrlType => "echoTransport: postUrl must be a string or URL".into(),
            ConfigError::Headers => "echoTransport: headers must be a function".into(),
            ConfigError::Fetch => "echoTransport: fetch must be a function".into(),
            ConfigError::PostUrl {
                post_url,
                page_origin,
                error,
            } => match error {
                PostUrlError::OpaquePage => format!(
                    "echoTransport: postUrl must be same-origin, and the page's origin is opaque (null), so no URL is; not {}",
                    quoted(post_url)
                ),
                PostUrlError::Invalid(why) => format!(
                    "echoTransport: postUrl {} is not a valid URL ({why})",
                    quoted(post_url)
                ),
                PostUrlError::CrossOrigin { origin } => format!(
                    "echoTransport: postUrl must be same-origin ({}), not {origin}",
                    page_origin.as_deref().unwrap_or("null")
                ),
            },
        }
    }
}

/// The page URL, split: `origin` is `scheme://host[:port]` (lower case,
/// default port dropped); `path` starts with `/`; `query` is empty or
/// starts with `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageUrl {
    scheme: String,
    origin: String,
    path: String,
    query: String,
}

impl PageUrl {
    /// Reads `location.href`. `None` when the page's origin is opaque.
    pub fn parse(href: &str) -> Option<PageUrl> {
        // Only http(s) pages are read, where `\` is `/`.
        let href = normalize_slashes(&clean(href));
        let (scheme, rest) = href.split_once(':')?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.strip_prefix("//")?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at_checked(end).unwrap_or((rest, ""));
        // location.href may carry userinfo; it is not part of the origin.
        let authority = super::rsplit_once_ascii(authority, b'@').map_or(authority, |(_, a)| a);
        let origin = origin_of(&scheme, authority).ok()?;
        let tail = tail.split_once('#').map_or(tail, |(t, _)| t);
        let (path, query) = match tail.find('?') {
            Some(q) => tail.split_at_checked(q).unwrap_or((tail, "")),
            None => (tail, ""),
        };
        let path = if path.is_empty() { "/" } else { path };
        Some(PageUrl {
            scheme,
            origin,
            path: path.into(),
            query: query.into(),
        })
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

/// The URL standard's input cleanup: leading and trailing C0 controls and
/// spaces trimmed, every ASCII tab and newline removed.
fn clean(input: &str) -> String {
    input
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect()
}

/// The serialized origin of `scheme` (lower case, special) and an
/// authority without userinfo, or why it has none.
fn origin_of(scheme: &str, authority: &str) -> Result<String, &'static str> {
    if authority.contains('@') {
        return Err("it has userinfo (user@)");
    }
    let hp = split_host_port(authority).map_err(|_| "its host is malformed")?;
    if hp.host.is_empty() {
        return Err("it has no host");
    }
    let host = hp.host.to_ascii_lowercase();
    // Lower case is the browser's own spelling of an ASCII host; anything
    // else (escapes, Unicode, forms the parser would rewrite) is refused.
    check_host(&host, true).map_err(|_| "its host is not a plain ASCII host name or IP address")?;
    let mut origin = format!("{scheme}://{host}");
    if let Some(digits) = hp.port {
        if !digits.is_empty() {
            let port =
                parse_port(digits).map_err(|_| "its port is not a number from 0 to 65535")?;
            if Some(port) != default_port(scheme) {
                origin.push_str(&format!(":{port}"));
            }
        }
    }
    Ok(origin)
}

/// Splits an authority off `rest` (what follows `//`): extra slashes are
/// skipped (special schemes), the authority ends at `/`, `?` or `#`.
fn split_authority(rest: &str) -> (&str, &str) {
    let rest = rest.trim_start_matches('/');
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest.split_at_checked(end).unwrap_or((rest, ""))
}

/// Backslashes before the query or fragment read as slashes (http(s)).
fn normalize_slashes(input: &str) -> String {
    let end = input.find(['?', '#']).unwrap_or(input.len());
    let (head, tail) = input.split_at_checked(end).unwrap_or((input, ""));
    let mut out = head.replace('\\', "/");
    out.push_str(tail);
    out
}

/// `postUrl` resolved against the page: the absolute URL to POST to, on
/// the page's origin, or why not. See the module docs for the rules.
pub fn resolve_post_url(post_url: &str, page: &PageUrl) -> Result<String, PostUrlError> {
    let input = normalize_slashes(&clean(post_url));
    let same = |scheme: &str, after_slashes: &str| -> Result<String, PostUrlError> {
        let (authority, path) = split_authority(after_slashes);
        let origin = origin_of(scheme, authority).map_err(PostUrlError::Invalid)?;
        if origin != page.origin {
            return Err(PostUrlError::CrossOrigin { origin });
        }
        Ok(format!("{origin}{path}"))
    };
    // An absolute URL: `scheme:` first.
    if let Some((scheme, rest)) = input.split_once(':') {
        if is_scheme(scheme) {
            let scheme = scheme.to_ascii_lowercase();
            if scheme != page.scheme {
                // Another scheme is another origin (or an opaque one:
                // javascript:, data:, blob:).
                let origin = match rest.strip_prefix("//") {
                    Some(after) if default_port(&scheme).is_some() => {
                        origin_of(&scheme, split_authority(after).0)
                            .unwrap_or_else(|_| "null".into())
                    }
                    _ => "null".into(),
                };
                return Err(PostUrlError::CrossOrigin { origin });
            }
            return match rest.strip_prefix("//") {
                Some(after) => same(&scheme, after),
                None => Err(PostUrlError::Invalid(
                    "the page's scheme without //; give a path (/x) or a full URL (scheme://host/x)",
                )),
            };
        }
    }
    if let Some(after) = input.strip_prefix("//") {
        return same(&page.scheme, after);
    }
    let origin = &page.origin;
    Ok(if input.starts_with('/') {
        format!("{origin}{input}")
    } else if input.starts_with('?') {
        format!("{origin}{}{input}", page.path)
    } else if input.starts_with('#') || input.is_empty() {
        format!("{origin}{}{}{input}", page.path, page.query)
    } else {
        let dir = super::rsplit_once_ascii(&page.path, b'/')
            .and_then(|(dir, _)| page.path.get(..=dir.len()))
            .unwrap_or("/");
        format!("{origin}{dir}{input}")
    })
}

/// Whether a broadcast payload is `{ message }`, from what the driver sees
/// of it: an object (not an array, not `null`), its own `message` and
/// `protocol` keys. Pusher hands the driver a parsed JS value, so the
/// driver asks this instead of converting the payload.
pub fn is_wrapped(is_object: bool, has_message: bool, has_protocol: bool) -> bool {
    is_object && has_message && !has_protocol
}

/// A broadcast payload's message: `payload.message` when the payload is
/// `{ message }` ([`is_wrapped`]), else the payload itself.
pub fn unwrap_payload(payload: &Value) -> &Value {
    match payload.as_object() {
        Some(object)
            if is_wrapped(
                true,
                object.contains_key("message"),
                object.contains_key("protocol"),
            ) =>
        {
            object.get("message").unwrap_or(payload)
        }
        _ => payload,
    }
}

/// Why a send failed; the bridge reports it as `transport_failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendFailure {
    /// After [`EchoPolicy::close`].
    Closed,
    /// `JSON.stringify` wrote no text for the message (`undefined`, a
    /// function, a symbol).
    NotJson,
    /// An app header fetch would refuse (its name, as given).
    BadHeader { name: String },
    /// No `fetch` option and no `globalThis.fetch` to fall back on.
    NoFetch,
    /// fetch rejected (network error, CORS, a redirect) or gave nothing.
    Network { url: String },
    /// A status outside 200–299.
    Status { url: String, status: u16 },
}

impl SendFailure {
    /// The code the send rejects with: an argument the request cannot
    /// carry, a send after close, a host without `fetch`, else (the
    /// server's or the network's failure) the event code `transport_failed`.
    pub fn thrown_code(&self) -> ToolmarkErrorCode {
        match self {
            SendFailure::BadHeader { .. } | SendFailure::NotJson => {
                ThrownErrorCode::InvalidArgument.into()
            }
            SendFailure::Closed => ThrownErrorCode::TransportClosed.into(),
            SendFailure::NoFetch => ThrownErrorCode::HostUnsupported.into(),
            SendFailure::Network { .. } | SendFailure::Status { .. } => {
                ErrorEventCode::TransportFailed.into()
            }
        }
    }

    /// The rejection's text, as the JS transport has it.
    pub fn message(&self) -> String {
        match self {
            SendFailure::Closed => "echoTransport: closed".into(),
            SendFailure::NotJson => "echoTransport: message is not JSON-serializable".into(),
            SendFailure::BadHeader { name } => {
                format!("echoTransport: header {} cannot be sent", quoted(name))
            }
            SendFailure::NoFetch => {
                "echoTransport: globalThis.fetch is not a function (pass options.fetch)".into()
            }
            SendFailure::Network { url } => format!("echoTransport: POST {url} answered nothing"),
            SendFailure::Status { url, status } => {
                format!("echoTransport: POST {url} answered {status}")
            }
        }
    }
}

/// A response as fetch settled: `None` when it rejected, else the status.
pub fn response_outcome(url: &str, status: Option<u16>) -> Result<(), SendFailure> {
    match status {
        Some(200..=299) => Ok(()),
        Some(status) => Err(SendFailure::Status {
            url: url.into(),
            status,
        }),
        None => Err(SendFailure::Network { url: url.into() }),
    }
}

/// One POST, for `fetch(url, { method, credentials, redirect, headers, body })`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub url: &'a str,
    pub method: &'static str,
    pub credentials: &'static str,
    pub redirect: &'static str,
    /// In order; names as given.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// RFC 9110 `token`: what fetch accepts as a header name.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// What fetch accepts as a header value (after trimming): no CR, LF or NUL.
fn is_header_value(value: &str) -> bool {
    !value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0))
}

/// The `closed` reason when the channel's subscription is refused.
pub const SUBSCRIPTION_REFUSED: &str = "subscription refused";
/// The `closed` reason when Echo reports its connection disconnected.
pub const DISCONNECTED: &str = "disconnected";

/// Echo's connection as `echo.connectionStatus()` and
/// `echo.connector.onConnectionChange` name it (Laravel Echo 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoConnection {
    Connected,
    Connecting,
    Reconnecting,
    Disconnected,
    Failed,
}

impl EchoConnection {
    /// The name Echo gives, if it is one of these.
    pub fn parse(name: &str) -> Option<EchoConnection> {
        Some(match name {
            "connected" => EchoConnection::Connected,
            "connecting" => EchoConnection::Connecting,
            "reconnecting" => EchoConnection::Reconnecting,
            "disconnected" => EchoConnection::Disconnected,
            "failed" => EchoConnection::Failed,
            _ => return None,
        })
    }

    /// Echo's first reading (`connectionStatus()`), given the state of its
    /// Pusher connection: none for a Pusher not started yet (`initialized`),
    /// which Echo 2 names `disconnected` as it does one stopped for good,
    /// though pusher-js connects by itself once the document has a body.
    pub fn first(name: Option<&str>, pusher_state: Option<&str>) -> Option<EchoConnection> {
        match pusher_state {
            Some("initialized") => None,
            _ => EchoConnection::parse(name?),
        }
    }
}

/// The policy of one `echoTransport`. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EchoPolicy {
    channel: String,
    event: String,
    url: String,
    closed: bool,
    status: StatusLog,
    /// `connecting` states told since the start or the last `open`.
    attempts: u32,
}

/// `echoTransport`'s options, by their JS types.
#[derive(Debug, Clone, PartialEq)]
pub struct EchoOptions {
    /// `echo.private`.
    pub echo_private: Given,
    pub channel: Given,
    pub event: Given,
    /// A `URL` object as its text.
    pub post_url: Given,
    pub headers: Given,
    pub fetch: Given,
}

impl EchoPolicy {
    /// Checks the options, each in turn: `echo` with a `private` method,
    /// `channel` a string, `event` left out or a string, `postUrl` left out,
    /// a string or a `URL`, `headers` and `fetch` left out or functions;
    /// then their values ([`Self::new`]).
    pub fn from_options(
        options: &EchoOptions,
        page_href: Option<&str>,
    ) -> Result<Self, ConfigError> {
        if !matches!(options.echo_private, Given::Function) {
            return Err(ConfigError::Echo);
        }
        let Given::Text(channel) = &options.channel else {
            return Err(ConfigError::Channel);
        };
        let event = match &options.event {
            Given::Undefined => None,
            Given::Text(event) => Some(event.as_str()),
            _ => return Err(ConfigError::Event),
        };
        let post_url = match &options.post_url {
            Given::Undefined => None,
            Given::Text(url) => Some(url.as_str()),
            _ => return Err(ConfigError::PostUrlType),
        };
        optional_function(&options.headers, ConfigError::Headers)?;
        optional_function(&options.fetch, ConfigError::Fetch)?;
        EchoPolicy::new(channel, event, post_url, page_href)
    }

    /// `event` and `post_url` default to [`DEFAULT_EVENT`] and
    /// [`DEFAULT_POST_URL`]. `page_href` is `location.href`; without one
    /// (no location: Node) `postUrl` is used as given, as in the JS.
    pub fn new(
        channel: &str,
        event: Option<&str>,
        post_url: Option<&str>,
        page_href: Option<&str>,
    ) -> Result<Self, ConfigError> {
        if channel.is_empty() {
            return Err(ConfigError::Channel);
        }
        let event = event.unwrap_or(DEFAULT_EVENT);
        if event.is_empty() {
            return Err(ConfigError::Event);
        }
        let post_url = post_url.unwrap_or(DEFAULT_POST_URL);
        let url = match page_href {
            None => post_url.to_owned(),
            Some(href) => {
                let fail = |page_origin: Option<String>, error| ConfigError::PostUrl {
                    post_url: post_url.into(),
                    page_origin,
                    error,
                };
                let page =
                    PageUrl::parse(href).ok_or_else(|| fail(None, PostUrlError::OpaquePage))?;
                resolve_post_url(post_url, &page).map_err(|e| fail(Some(page.origin.clone()), e))?
            }
        };
        Ok(EchoPolicy {
            channel: channel.into(),
            event: event.into(),
            url,
            closed: false,
            status: StatusLog::new(Status::Connecting { attempt: 1 }),
            attempts: 1,
        })
    }

    /// The private channel to join (`echo.private(channel)`).
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The event to listen for.
    pub fn event(&self) -> &str {
        &self.event
    }

    /// The resolved POST URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What `echo.leaveChannel` takes on close (`private-{channel}`).
    pub fn leave_channel_name(&self) -> String {
        format!("private-{}", self.channel)
    }

    /// The request for one send: `body` is the message's JSON text,
    /// `app_headers` what `headers()` returned just now (in its order).
    pub fn request<N: AsRef<str>, V: AsRef<str>>(
        &self,
        body: String,
        app_headers: &[(N, V)],
    ) -> Result<Request<'_>, SendFailure> {
        if self.closed {
            return Err(SendFailure::Closed);
        }
        let mut headers: Vec<(String, String)> = FIXED_HEADERS
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        for (name, value) in app_headers {
            let (name, value) = (name.as_ref(), value.as_ref());
            if !is_token(name) || !is_header_value(value) {
                return Err(SendFailure::BadHeader { name: name.into() });
            }
            match headers
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                // Replaced in place, as a later key of an object spread.
                Some(slot) => *slot = (name.into(), value.into()),
                None => headers.push((name.into(), value.into())),
            }
        }
        Ok(Request {
            url: &self.url,
            method: "POST",
            credentials: "same-origin",
            redirect: "error",
            headers,
            body,
        })
    }

    /// Stops sending; the driver stops listening and leaves the channel.
    /// Returns whether this call closed it (a second call does nothing).
    pub fn close(&mut self) -> bool {
        if self.closed {
            return false;
        }
        self.tell(Status::closed(None, CLOSED_BY_CLOSE, true));
        self.closed = true;
        true
    }

    /// The connection state now.
    pub fn status(&self) -> &Status {
        self.status.now()
    }

    /// The next connection state to tell, oldest first.
    pub fn poll_status(&mut self) -> Option<Status> {
        self.status.poll()
    }

    /// Tells `status` unless closed or already the state.
    fn tell(&mut self, status: Status) {
        if !self.closed && *self.status.now() != status {
            self.status.tell(status);
        }
    }

    /// The private channel is subscribed (its `subscribed` callback, or
    /// found subscribed at construction).
    pub fn handle_subscribed(&mut self) {
        if !self.closed {
            self.attempts = 0;
        }
        self.tell(Status::Open);
    }

    /// The channel's `error` callback: the subscription was refused, with
    /// the HTTP status of the authorization request when Echo gives it.
    pub fn handle_subscription_error(&mut self, http_status: Option<u16>) {
        self.tell(Status::closed(http_status, SUBSCRIPTION_REFUSED, true));
    }

    /// Echo reported its connection.
    pub fn handle_connection(&mut self, connection: EchoConnection) {
        let lost = |reason: &str| Status::closed(None, reason, false);
        match (connection, self.status.now()) {
            (EchoConnection::Connecting | EchoConnection::Reconnecting, Status::Open) => {
                self.tell(lost("connection lost"));
                self.attempts = self.attempts.saturating_add(1);
                self.tell(Status::Connecting {
                    attempt: self.attempts,
                });
            }
            (
                EchoConnection::Connecting
                | EchoConnection::Reconnecting
                | EchoConnection::Connected,
                Status::Closed { .. },
            ) => {
                self.attempts = self.attempts.saturating_add(1);
                self.tell(Status::Connecting {
                    attempt: self.attempts,
                });
            }
            (EchoConnection::Failed, Status::Open | Status::Connecting { .. }) => {
                self.tell(lost("connection failed"));
            }
            // Pusher stays disconnected until the app connects it again.
            (
                EchoConnection::Disconnected,
                Status::Open
                | Status::Connecting { .. }
                | Status::Closed {
                    terminal: false, ..
                },
            ) => {
                self.tell(Status::closed(None, DISCONNECTED, true));
            }
            // Connected: the channel's subscription tells `open`.
            _ => {}
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

/// The channels `echoTransport`s hold, each known by the object Echo
/// hands out for it (`C`, compared by identity: Echo hands out one per
/// joined channel). Echo keeps one subscription per channel, shared by
/// everyone who listens on it, so a transport's close leaves the channel
/// only when it is the last transport holding it, and only if a transport
/// joined it: a channel the app had joined before is the app's to leave.
#[derive(Debug)]
pub struct ChannelHolds<C> {
    holds: Vec<Hold<C>>,
}

#[derive(Debug)]
struct Hold<C> {
    channel: C,
    transports: u32,
    /// Echo had the channel joined before the first transport held it.
    app_joined: bool,
}

impl<C: PartialEq> ChannelHolds<C> {
    /// No channel held.
    pub const fn new() -> Self {
        ChannelHolds { holds: Vec::new() }
    }

    /// A transport holds `channel`; `joined`: Echo had joined it before
    /// this transport asked for it.
    pub fn hold(&mut self, channel: C, joined: bool) {
        match self.holds.iter_mut().find(|h| h.channel == channel) {
            Some(hold) => hold.transports = hold.transports.saturating_add(1),
            None => self.holds.push(Hold {
                channel,
                transports: 1,
                app_joined: joined,
            }),
        }
    }

    /// A transport holding `channel` closed: whether it leaves the channel
    /// (the last holder of a channel a transport joined).
    pub fn release(&mut self, channel: &C) -> bool {
        let Some(at) = self.holds.iter().position(|h| h.channel == *channel) else {
            return false;
        };
        let Some(hold) = self.holds.get_mut(at) else {
            return false;
        };
        hold.transports = hold.transports.saturating_sub(1);
        if hold.transports > 0 {
            return false;
        }
        !self.holds.swap_remove(at).app_joined
    }
}

impl<C: PartialEq> Default for ChannelHolds<C> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAGE: &str = "https://app.example/chat/42?tab=1#top";

    fn policy() -> EchoPolicy {
        EchoPolicy::new("toolmark.1.2", None, None, None).unwrap()
    }

    fn told(p: &mut EchoPolicy) -> Vec<Status> {
        core::iter::from_fn(|| p.poll_status()).collect()
    }

    fn closed(code: Option<u16>, reason: &str, terminal: bool) -> Status {
        Status::closed(code, reason, terminal)
    }

    #[test]
    fn echos_first_reading_of_a_pusher_not_started_is_no_state() {
        use EchoConnection::*;
        assert_eq!(
            EchoConnection::first(Some("disconnected"), Some("initialized")),
            None
        );
        assert_eq!(
            EchoConnection::first(Some("connecting"), Some("initialized")),
            None
        );
        assert_eq!(
            EchoConnection::first(Some("disconnected"), Some("disconnected")),
            Some(Disconnected)
        );
        assert_eq!(
            EchoConnection::first(Some("disconnected"), None),
            Some(Disconnected)
        );
        assert_eq!(
            EchoConnection::first(Some("connected"), Some("connected")),
            Some(Connected)
        );
        assert_eq!(EchoConnection::first(None, Some("connected")), None);
        assert_eq!(EchoConnection::first(Some("other"), None), None);
    }

    #[test]
    fn echo_connection_names_are_laravel_echos() {
        for (name, connection) in [
            ("connected", EchoConnection::Connected),
            ("connecting", EchoConnection::Connecting),
            ("reconnecting", EchoConnection::Reconnecting),
            ("disconnected", EchoConnection::Disconnected),
            ("failed", EchoConnection::Failed),
        ] {
            assert_eq!(EchoConnection::parse(name), Some(connection));
        }
        assert_eq!(EchoConnection::parse("unavailable"), None);
    }

    #[test]
    fn the_channel_is_connecting_until_subscribed_then_open() {
        let mut p = policy();
        assert_eq!(p.status(), &Status::Connecting { attempt: 1 });
        p.handle_connection(EchoConnection::Connecting);
        p.handle_connection(EchoConnection::Connected);
        assert_eq!(told(&mut p), []);
        p.handle_subscribed();
        assert_eq!(told(&mut p), [Status::Open]);
    }

    #[test]
    fn a_lost_connection_is_closed_then_a_new_attempt_until_subscribed_again() {
        let mut p = policy();
        p.handle_subscribed();
        told(&mut p);
        p.handle_connection(EchoConnection::Connecting);
        p.handle_connection(EchoConnection::Failed);
        p.handle_connection(EchoConnection::Connecting);
        p.handle_connection(EchoConnection::Connected);
        p.handle_subscribed();
        assert_eq!(
            told(&mut p),
            [
                closed(None, "connection lost", false),
                Status::Connecting { attempt: 1 },
                closed(None, "connection failed", false),
                Status::Connecting { attempt: 2 },
                Status::Open,
            ]
        );
    }

    #[test]
    fn a_server_that_never_answers_is_a_failed_attempt_each_time_echo_gives_up() {
        let mut p = policy();
        for _ in 0..2 {
            p.handle_connection(EchoConnection::Connecting);
            p.handle_connection(EchoConnection::Failed);
        }
        assert_eq!(
            told(&mut p),
            [
                closed(None, "connection failed", false),
                Status::Connecting { attempt: 2 },
                closed(None, "connection failed", false),
            ]
        );
    }

    /// Pusher is disconnected by the app's `disconnect()` or by a server
    /// that refused the connection (pusher:error 4000–4099, e.g. an unknown
    /// app key), and does not connect again by itself: terminal, whatever
    /// came before; a connection the app starts again is a new attempt.
    #[test]
    fn a_disconnected_connection_is_closed_for_good_until_the_app_connects_again() {
        let mut p = policy();
        p.handle_connection(EchoConnection::Disconnected);
        assert_eq!(told(&mut p), [closed(None, DISCONNECTED, true)]);
        p.handle_connection(EchoConnection::Disconnected);
        assert_eq!(told(&mut p), []);
        p.handle_connection(EchoConnection::Connecting);
        p.handle_subscribed();
        assert_eq!(
            told(&mut p),
            [Status::Connecting { attempt: 2 }, Status::Open]
        );
        // Open, and while Echo tries again after a lost connection.
        p.handle_connection(EchoConnection::Disconnected);
        assert_eq!(told(&mut p), [closed(None, DISCONNECTED, true)]);
        p.handle_connection(EchoConnection::Connecting);
        p.handle_connection(EchoConnection::Failed);
        p.handle_connection(EchoConnection::Disconnected);
        assert_eq!(
            told(&mut p),
            [
                Status::Connecting { attempt: 1 },
                closed(None, "connection failed", false),
                closed(None, DISCONNECTED, true),
            ]
        );
        let mut watch = super::super::status::StatusWatch::default();
        let mut p = policy();
        watch.observe(p.status());
        p.handle_connection(EchoConnection::Disconnected);
        let failed: Vec<String> = told(&mut p)
            .iter()
            .filter_map(|s| watch.observe(s))
            .collect();
        assert_eq!(
            failed,
            ["transport: connection attempt 1 failed (disconnected); not retrying"]
        );
    }

    #[test]
    fn a_refused_subscription_is_closed_with_the_http_status() {
        let mut p = policy();
        p.handle_subscription_error(Some(403));
        assert_eq!(
            told(&mut p),
            [closed(Some(403), SUBSCRIPTION_REFUSED, true)]
        );
        // Echo subscribes again once its connection comes back.
        p.handle_connection(EchoConnection::Disconnected);
        p.handle_connection(EchoConnection::Connecting);
        p.handle_subscribed();
        assert_eq!(
            told(&mut p),
            [Status::Connecting { attempt: 2 }, Status::Open]
        );
    }

    #[test]
    fn close_is_the_last_state_and_terminal() {
        let mut p = policy();
        p.handle_subscribed();
        assert!(p.close());
        assert!(!p.close());
        p.handle_connection(EchoConnection::Disconnected);
        p.handle_subscribed();
        assert_eq!(
            told(&mut p),
            [Status::Open, closed(None, CLOSED_BY_CLOSE, true)]
        );
        assert_eq!(p.status(), &closed(None, CLOSED_BY_CLOSE, true));
    }

    #[test]
    fn a_channel_is_left_by_its_last_transport_and_only_if_a_transport_joined_it() {
        let mut holds = ChannelHolds::new();
        // Two transports on one channel the app had not joined.
        holds.hold("a", false);
        holds.hold("a", true);
        assert!(!holds.release(&"a"));
        assert!(holds.release(&"a"));
        // Released for good: a later close of nothing leaves nothing.
        assert!(!holds.release(&"a"));
        // A channel the app had joined is never left by a transport.
        holds.hold("b", true);
        assert!(!holds.release(&"b"));
        // Held again after that, by a transport that joined it.
        holds.hold("b", false);
        assert!(holds.release(&"b"));
    }

    #[test]
    fn each_channel_is_held_on_its_own() {
        let mut holds = ChannelHolds::new();
        holds.hold("a", false);
        holds.hold("b", true);
        holds.hold("c", false);
        assert!(!holds.release(&"d"));
        assert!(holds.release(&"c"));
        assert!(!holds.release(&"b"));
        assert!(holds.release(&"a"));
    }

    fn page() -> PageUrl {
        PageUrl::parse(PAGE).unwrap()
    }

    fn resolve(post: &str) -> Result<String, PostUrlError> {
        resolve_post_url(post, &page())
    }

    fn cross(post: &str) -> String {
        match resolve(post) {
            Err(PostUrlError::CrossOrigin { origin }) => origin,
            other => panic!("{post}: expected cross-origin, got {other:?}"),
        }
    }

    #[test]
    fn the_page_url_is_split() {
        let p = page();
        assert_eq!(p.origin(), "https://app.example");
        assert_eq!((p.path.as_str(), p.query.as_str()), ("/chat/42", "?tab=1"));
        let p = PageUrl::parse("HTTP://User:pw@App.Example:0080").unwrap();
        assert_eq!((p.origin(), p.path.as_str()), ("http://app.example", "/"));
        assert_eq!(
            PageUrl::parse("http://[::1]:8000/x").unwrap().origin(),
            "http://[::1]:8000"
        );
        // A backslash ends the host as a slash does (found by the transport
        // fuzz target: the part after `@` was read as the host).
        let p = PageUrl::parse("https://a7\\.pp@evil.example/x").unwrap();
        assert_eq!(
            (p.origin(), p.path.as_str()),
            ("https://a7", "/.pp@evil.example/x")
        );
        // A host with `_` (a Docker Compose service) is the page's own
        // spelling; its relative and same-origin absolute postUrls resolve.
        let p = PageUrl::parse("http://laravel_app:8000/chat").unwrap();
        assert_eq!(p.origin(), "http://laravel_app:8000");
        assert_eq!(
            resolve_post_url("/toolmark/bridge", &p).as_deref(),
            Ok("http://laravel_app:8000/toolmark/bridge")
        );
        assert_eq!(
            resolve_post_url("http://Laravel_App:8000/in", &p).as_deref(),
            Ok("http://laravel_app:8000/in")
        );
        for opaque in [
            "about:blank",
            "file:///tmp/x.html",
            "data:text/html,x",
            "blob:https://app.example/1",
            "nonsense",
            "https:/x",
        ] {
            assert_eq!(PageUrl::parse(opaque), None, "{opaque}");
        }
    }

    #[test]
    fn relative_references_are_same_origin_and_resolved() {
        for (post, href) in [
            ("/toolmark/bridge", "https://app.example/toolmark/bridge"),
            ("bridge", "https://app.example/chat/bridge"),
            ("../bridge", "https://app.example/chat/../bridge"),
            ("?x=1", "https://app.example/chat/42?x=1"),
            ("#f", "https://app.example/chat/42?tab=1#f"),
            ("", "https://app.example/chat/42?tab=1"),
            (
                "  /toolmark/bridge\n",
                "https://app.example/toolmark/bridge",
            ),
            ("/a\\b?c\\d", "https://app.example/a/b?c\\d"),
            ("x/a:b", "https://app.example/chat/x/a:b"),
        ] {
            assert_eq!(resolve(post).as_deref(), Ok(href), "{post:?}");
        }
        // `a:b/c` starts with a scheme (`a:`): an absolute URL, opaque.
        assert_eq!(cross("a:b/c"), "null");
    }

    #[test]
    fn absolute_urls_must_have_the_pages_scheme_host_and_port() {
        for (post, href) in [
            (
                "https://app.example/toolmark/bridge",
                "https://app.example/toolmark/bridge",
            ),
            ("HTTPS://APP.example/x", "https://app.example/x"),
            ("https://app.example:443/x", "https://app.example/x"),
            ("https://app.example:0443/x", "https://app.example/x"),
            ("https://app.example", "https://app.example"),
            ("https://app.example?q", "https://app.example?q"),
            ("https:\\\\app.example\\x", "https://app.example/x"),
            ("https:////app.example/x", "https://app.example/x"),
            ("//app.example/x", "https://app.example/x"),
        ] {
            assert_eq!(resolve(post).as_deref(), Ok(href), "{post:?}");
        }
        assert_eq!(cross("https://evil.example/x"), "https://evil.example");
        assert_eq!(cross("http://app.example/x"), "http://app.example");
        assert_eq!(
            cross("https://app.example:8443/x"),
            "https://app.example:8443"
        );
        // A trailing dot is another origin; refused here as an odd host.
        assert!(matches!(
            resolve("https://app.example./x"),
            Err(PostUrlError::Invalid(_))
        ));
        assert_eq!(
            cross("https://sub.app.example/x"),
            "https://sub.app.example"
        );
        assert_eq!(cross("wss://app.example/x"), "wss://app.example");
        assert_eq!(cross("javascript:alert(1)"), "null");
        assert_eq!(cross("data:text/plain,x"), "null");
    }

    #[test]
    fn protocol_relative_and_slash_tricks_are_cross_origin() {
        for post in [
            "//evil.example/x",
            "\\\\evil.example/x",
            "/\\evil.example/x",
            "\\/evil.example/x",
            "///evil.example/x",
            "/\t/evil.example/x",
            "/\n/evil.example",
            " //evil.example",
            "https://evil.example\\@app.example/",
        ] {
            assert_eq!(cross(post), "https://evil.example", "{post:?}");
        }
    }

    #[test]
    fn userinfo_odd_hosts_and_ambiguous_forms_are_refused() {
        for post in [
            "https://app.example@evil.example/x",
            "https://user:pw@app.example/x",
            "//app.example:443@evil.example",
            "https://%61pp.example/x",
            "https://äpp.example/x",
            "https://app.example:99999/x",
            "https://app.example:x/x",
            "https:///",
            "https:app.example/x",
            "https:/x",
        ] {
            assert!(
                matches!(resolve(post), Err(PostUrlError::Invalid(_))),
                "{post:?}: {:?}",
                resolve(post)
            );
        }
    }

    #[test]
    fn construction_checks_channel_event_and_post_url() {
        assert_eq!(
            EchoPolicy::new("", None, None, None),
            Err(ConfigError::Channel)
        );
        assert_eq!(
            EchoPolicy::new("c", Some(""), None, None),
            Err(ConfigError::Event)
        );
        assert_eq!(
            ConfigError::Channel.message(),
            "echoTransport: channel must be a non-empty string"
        );
        assert_eq!(
            ConfigError::Event.message(),
            "echoTransport: event must be a non-empty string"
        );
        let p = EchoPolicy::new("toolmark.1.2", None, None, Some(PAGE)).unwrap();
        assert_eq!(p.url(), "https://app.example/toolmark/bridge");
        assert_eq!(p.event(), ".toolmark.message");
        assert_eq!(p.channel(), "toolmark.1.2");
        assert_eq!(p.leave_channel_name(), "private-toolmark.1.2");
        // No location (Node): used as given.
        assert_eq!(
            EchoPolicy::new("c", None, Some("/x"), None).unwrap().url(),
            "/x"
        );

        let err = EchoPolicy::new("c", None, Some("//evil.example/x"), Some(PAGE)).unwrap_err();
        assert_eq!(
            err.message(),
            "echoTransport: postUrl must be same-origin (https://app.example), not https://evil.example"
        );
        let err =
            EchoPolicy::new("c", None, Some("https://u@app.example/"), Some(PAGE)).unwrap_err();
        assert_eq!(
            err.message(),
            "echoTransport: postUrl \"https://u@app.example/\" is not a valid URL (it has userinfo (user@))"
        );
        let err = EchoPolicy::new("c", None, Some("/x"), Some("about:blank")).unwrap_err();
        assert!(err.message().contains("opaque"), "{}", err.message());
        for e in [
            ConfigError::Echo,
            ConfigError::PostUrlType,
            ConfigError::Headers,
            ConfigError::Fetch,
        ] {
            assert!(e.message().starts_with("echoTransport: "));
        }
    }

    /// Options with every one valid and the rest left out.
    fn options() -> EchoOptions {
        EchoOptions {
            echo_private: Given::Function,
            channel: Given::Text("toolmark.1.2".into()),
            event: Given::Undefined,
            post_url: Given::Undefined,
            headers: Given::Undefined,
            fetch: Given::Undefined,
        }
    }

    #[test]
    fn options_are_checked_by_their_js_types_in_order() {
        assert_eq!(
            EchoPolicy::from_options(&options(), None).unwrap(),
            policy()
        );
        let given = EchoOptions {
            event: Given::Text(".e".into()),
            post_url: Given::Text("https://app.example/in".into()),
            headers: Given::Function,
            fetch: Given::Function,
            ..options()
        };
        let p = EchoPolicy::from_options(&given, Some(PAGE)).unwrap();
        assert_eq!((p.event(), p.url()), (".e", "https://app.example/in"));
        let refused = |change: fn(&mut EchoOptions)| {
            let mut options = options();
            change(&mut options);
            EchoPolicy::from_options(&options, Some(PAGE)).unwrap_err()
        };
        type Change = fn(&mut EchoOptions);
        let refusals: [(ConfigError, &[Change]); 6] = [
            (
                ConfigError::Echo,
                &[
                    |o| o.echo_private = Given::Undefined,
                    |o| o.echo_private = Given::Other,
                ],
            ),
            (
                ConfigError::Channel,
                &[
                    |o| o.channel = Given::Number(1.0),
                    |o| o.channel = Given::Text(String::new()),
                ],
            ),
            (ConfigError::Event, &[|o| o.event = Given::Null]),
            (
                ConfigError::PostUrlType,
                &[|o| o.post_url = Given::Other, |o| o.post_url = Given::Null],
            ),
            (ConfigError::Headers, &[|o| o.headers = Given::Other]),
            (ConfigError::Fetch, &[|o| o.fetch = Given::Null]),
        ];
        for (expected, changes) in refusals {
            for change in changes {
                let error = refused(*change);
                assert_eq!(error, expected);
                assert_eq!(error.thrown_code(), ThrownErrorCode::InvalidArgument);
            }
        }
        // The values are checked after every type.
        assert_eq!(
            refused(|o| {
                o.channel = Given::Text(String::new());
                o.fetch = Given::Other;
            }),
            ConfigError::Fetch
        );
    }

    #[test]
    fn payloads_are_the_message_or_wrap_it() {
        let message = json!({"protocol": 1, "type": "call", "clientId": "c"});
        assert_eq!(unwrap_payload(&message), &message);
        let wrapped = json!({"message": message.clone()});
        assert_eq!(unwrap_payload(&wrapped), &message);
        // A `protocol` key means it is the message, even with `message`.
        let both = json!({"protocol": 1, "message": "x"});
        assert_eq!(unwrap_payload(&both), &both);
        for other in [
            json!([{"message": 1}]),
            json!(null),
            json!("m"),
            json!({"other": 1}),
        ] {
            assert_eq!(unwrap_payload(&other), &other);
        }
        assert_eq!(unwrap_payload(&json!({"message": null})), &json!(null));
    }

    #[test]
    fn the_request_has_the_fixed_shape_and_the_app_headers() {
        let p = EchoPolicy::new("c", None, None, Some(PAGE)).unwrap();
        let r = p
            .request(
                "{\"a\":1}".into(),
                &[("X-XSRF-TOKEN", "tok"), ("X-Extra", "1")],
            )
            .unwrap();
        assert_eq!(r.url, "https://app.example/toolmark/bridge");
        assert_eq!(
            (r.method, r.credentials, r.redirect),
            ("POST", "same-origin", "error")
        );
        assert_eq!(r.body, "{\"a\":1}");
        let names: Vec<(&str, &str)> = r
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
                ("X-Requested-With", "XMLHttpRequest"),
                ("X-XSRF-TOKEN", "tok"),
                ("X-Extra", "1"),
            ]
        );
        let none: [(&str, &str); 0] = [];
        assert_eq!(p.request(String::new(), &none).unwrap().headers.len(), 3);
    }

    #[test]
    fn an_app_header_replaces_a_fixed_one_of_the_same_name() {
        let p = EchoPolicy::new("c", None, None, Some(PAGE)).unwrap();
        let r = p
            .request(String::new(), &[("accept", "application/vnd.api+json")])
            .unwrap();
        assert_eq!(r.headers.len(), 3);
        assert_eq!(
            r.headers.get(1),
            Some(&("accept".into(), "application/vnd.api+json".into()))
        );
    }

    #[test]
    fn bad_app_headers_fail_the_send() {
        let p = EchoPolicy::new("c", None, None, Some(PAGE)).unwrap();
        for (name, value) in [
            ("X-A", "a\r\nInjected: 1"),
            ("Bad Name", "v"),
            ("", "v"),
            ("X-B", "a\0"),
        ] {
            let err = p.request(String::new(), &[(name, value)]).unwrap_err();
            assert_eq!(err, SendFailure::BadHeader { name: name.into() });
            assert_eq!(err.thrown_code().as_str(), "invalid_argument");
        }
    }

    #[test]
    fn network_errors_and_non_2xx_are_transport_failed() {
        let url = "https://app.example/toolmark/bridge";
        assert_eq!(response_outcome(url, Some(200)), Ok(()));
        assert_eq!(response_outcome(url, Some(204)), Ok(()));
        assert_eq!(response_outcome(url, Some(299)), Ok(()));
        for status in [199, 301, 302, 404, 419, 500] {
            let err = response_outcome(url, Some(status)).unwrap_err();
            assert_eq!(err.thrown_code().as_str(), "transport_failed");
            assert_eq!(
                err.message(),
                format!("echoTransport: POST {url} answered {status}")
            );
        }
        let err = response_outcome(url, None).unwrap_err();
        assert_eq!(
            err.message(),
            format!("echoTransport: POST {url} answered nothing")
        );
        assert_eq!(
            err.thrown_code(),
            ToolmarkErrorCode::Event(ErrorEventCode::TransportFailed)
        );
        let closed = SendFailure::Closed;
        assert_eq!(closed.thrown_code().as_str(), "transport_closed");
        assert_eq!(closed.message(), "echoTransport: closed");
    }

    #[test]
    fn send_after_close_fails() {
        let mut p = EchoPolicy::new("c", None, None, Some(PAGE)).unwrap();
        assert!(!p.is_closed());
        assert!(p.close());
        assert!(!p.close());
        assert!(p.is_closed());
        let none: [(&str, &str); 0] = [];
        let err = p.request(String::new(), &none).unwrap_err();
        assert_eq!(err, SendFailure::Closed);
        assert_eq!(err.message(), "echoTransport: closed");
    }

    #[test]
    fn a_message_json_cannot_write_is_an_invalid_argument_and_a_host_without_fetch_unsupported() {
        let refusals = [
            (
                SendFailure::NotJson,
                "invalid_argument",
                "echoTransport: message is not JSON-serializable",
            ),
            (
                SendFailure::NoFetch,
                "host_unsupported",
                "echoTransport: globalThis.fetch is not a function (pass options.fetch)",
            ),
        ];
        for (err, code, text) in refusals {
            assert_eq!(err.thrown_code().as_str(), code);
            assert_eq!(err.message(), text);
        }
    }
}
