//! The WebSocket transport's policy: when to connect and reconnect, what to
//! buffer, which frames reach the bridge. No socket, no timer, no clock: the
//! driver passes every socket event in with the time in ms and carries out
//! the [`Action`]s.
//!
//! # What it decides
//! - **Reconnect schedule**: [`FIRST_DELAY_MS`] first, doubling, capped by
//!   `maxDelayMs` (default [`DEFAULT_MAX_DELAY_MS`]; the cap also bounds the
//!   first delay, so `maxDelayMs: 100` waits 100 ms). It stops for good on a close whose code is in
//!   `terminalCloseCodes`, on a rejecting `onOpen`, or on [`WebSocketPolicy::close`].
//! - **When the delay starts over**: only after a connection has proved
//!   itself by staying *ready* (open and `onOpen` settled) for at least
//!   [`PROVEN_AFTER_MS`], measured when it closes. A server that accepts and
//!   closes at once (or after a few seconds) therefore sees the delay grow
//!   to the cap instead of a reconnect every 500 ms. An inbound message does not prove anything: a server can
//!   send one and close.
//! - **Outgoing buffer**: while not ready (disconnected, connecting, or
//!   `onOpen` pending) at most [`MAX_BUFFERED`] texts, oldest evicted;
//!   flushed in order on ready, before any held inbound message is delivered.
//!   A page's registry state ([`registry_state`]) buffered is superseded by
//!   its next: a `manifest` drops the page's earlier `manifest`s and
//!   `changed`s, a `changed` its earlier `changed`s (never a `manifest`,
//!   the only tool list a `changed` page sends). The server keeps only the
//!   latest, so nothing it needs goes; otherwise an app registering tools
//!   while offline (one `manifest` per revision) would evict the results
//!   of the calls answered meanwhile.
//!   A send the driver finds its socket closing for (the `close` event not
//!   yet handled, where a socket drops a send silently) goes back to the
//!   buffer with the ones queued after it ([`WebSocketPolicy::handle_unsent`]).
//! - **Inbound held while `onOpen` is pending**: at most [`MAX_HELD`]
//!   frames and [`MAX_HELD_BYTES`] bytes of their UTF-8 text per
//!   connection, oldest evicted to make room; a frame longer than
//!   [`MAX_HELD_BYTES`] alone is dropped. Every frame evicted or dropped
//!   so is counted ([`WebSocketPolicy::held_dropped`]).
//! - **Frames not read**: [`WebSocketPolicy::reads`] tells the driver,
//!   from a frame's length alone, when its text would be dropped whatever
//!   it says (too long, a stale socket), and [`WebSocketPolicy::holds`]
//!   from its UTF-8 length, when it is too long to hold: it is not copied
//!   into wasm memory at all. Held frames are delivered
//!   in order on ready, dropped if `onOpen` rejects or the socket closes
//!   first.
//! - **Frames**: a binary frame, or a text frame of more than
//!   [`MAX_FRAME_UTF16_UNITS`] UTF-16 code units, is dropped unparsed. A
//!   text frame is delivered as its text, unread: whether it is JSON is
//!   its reader's question, so that the text is read once. The spec has a
//!   frame that is not JSON dropped silently, before the bridge's own
//!   limit; the bridge reading it does so
//!   (`machine::Toolmark::handle_inbound_frame`), and another subscriber
//!   gets no message for it (the driver's `JSON.parse` fails).
//! - **Connection state** ([`Status`], [`WebSocketPolicy::status`]):
//!   `connecting` at each socket asked for, `open` once ready, `closed`
//!   with the socket's code and reason (or why this side stopped: a
//!   throwing constructor, a rejecting `onOpen`, `close()`), then
//!   `reconnecting` with the attempt and the delay the schedule above
//!   chose. Queued at the transition ([`WebSocketPolicy::poll_status`]).
//! - **Options**: every option is checked here, from the JS types the
//!   driver read ([`WebSocketConfig::from_options`]).
//!
//! # What the driver does
//! Create the policy, then after every `handle_*` call and after
//! [`WebSocketPolicy::send`] / [`WebSocketPolicy::close`] drain, until both
//! are empty, [`WebSocketPolicy::poll_status`] first (tell the transport's
//! status subscribers) and then [`WebSocketPolicy::poll_action`] (a state
//! is queued with the transition that leads to it, so it is told before
//! that transition's actions: `open` before the messages held for it,
//! `closed` before [`Action::Stopped`]), then arm one timer at
//! [`WebSocketPolicy::poll_timeout`] (replacing any earlier one; `None`:
//! no timer) that calls [`WebSocketPolicy::handle_timeout`]. Each socket
//! belongs to the [`ConnId`] of the [`Action::Connect`] that created it, and
//! every event of that socket is reported with it; events of an older
//! socket are ignored, so the driver need not detach listeners in a hurry.
//! The socket's `binaryType` should be `arraybuffer` (binary frames are
//! dropped anyway; a Blob read would reorder events). An `error` event
//! needs no call: a `close` event follows it.

use super::status::{Status, StatusLog, CLOSED_BY_CLOSE};
use crate::given::{optional_function, status_code, Given, GivenList};
use crate::prelude::*;
use crate::protocol::ThrownErrorCode;
use crate::vecmap::Queue;

/// The first reconnect delay.
pub const FIRST_DELAY_MS: u64 = 500;
/// `maxDelayMs` when the option is left out.
pub const DEFAULT_MAX_DELAY_MS: u64 = 30_000;
/// Outgoing texts kept while not ready; the oldest is evicted beyond it.
pub const MAX_BUFFERED: usize = 100;
/// Inbound texts held per connection while `onOpen` is pending.
pub const MAX_HELD: usize = 100;
/// UTF-8 bytes of the inbound texts held per connection while `onOpen` is
/// pending: four times the bridge's default `maxMessageBytes`, so four
/// messages the bridge takes by default always fit, and a frame of
/// 4 × 1048576 ASCII units (JSON escapes all else) too.
pub const MAX_HELD_BYTES: usize = 4 * 1_048_576;
/// Longest text frame delivered: 4 × 1048576 UTF-16 code units.
pub const MAX_FRAME_UTF16_UNITS: usize = 4 * 1_048_576;
/// A connection that stayed ready this long (measured at its close) has
/// proved itself: the reconnect delay starts over at [`FIRST_DELAY_MS`].
pub const PROVEN_AFTER_MS: u64 = 10_000;
/// The close code sent by [`WebSocketPolicy::close`].
pub const NORMAL_CLOSURE: u16 = 1000;
/// The code the WebSocket API gives a close that carried none.
pub const NO_STATUS_RECEIVED: u16 = 1005;

/// A `close` event's `code` as read (`None`: not a number); one that is no
/// close code reads as [`NO_STATUS_RECEIVED`].
pub fn close_code(code: Option<f64>) -> u16 {
    code.and_then(status_code).unwrap_or(NO_STATUS_RECEIVED)
}

/// The `closed` reason when the WebSocket constructor threw.
pub const CONSTRUCTOR_THREW: &str = "the WebSocket constructor threw";
/// The `closed` reason when `onOpen` rejected or threw.
pub const ON_OPEN_REJECTED: &str = "onOpen rejected";

/// A bad `websocketTransport` option; [`ConfigError::message`] is the
/// `TypeError` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigError {
    /// `url` is neither a string nor a `URL`.
    Url,
    /// No WebSocket constructor.
    NoWebSocket,
    /// `maxDelayMs` is not a number greater than 0.
    MaxDelay,
    /// `terminalCloseCodes` is not an array of integers.
    TerminalCloseCodes,
    /// `onOpen` is given and not a function.
    OnOpen,
}

impl ConfigError {
    /// The code `websocketTransport` throws with: a host without a
    /// WebSocket lacks what it needs; every other refusal is the caller's.
    pub fn thrown_code(self) -> ThrownErrorCode {
        match self {
            ConfigError::NoWebSocket => ThrownErrorCode::HostUnsupported,
            _ => ThrownErrorCode::InvalidArgument,
        }
    }

    /// The error text, as the JS transport has it.
    pub fn message(self) -> &'static str {
        match self {
            ConfigError::Url => "websocketTransport: url must be a string or URL",
            ConfigError::NoWebSocket => "websocketTransport: no WebSocket implementation (pass options.WebSocket, e.g. from the ws package)",
            ConfigError::MaxDelay => "websocketTransport: maxDelayMs must be a positive number",
            ConfigError::TerminalCloseCodes => {
                "websocketTransport: terminalCloseCodes must be an array of integer close codes"
            }
            ConfigError::OnOpen => "websocketTransport: onOpen must be a function",
        }
    }
}

/// `websocketTransport`'s options, by their JS types.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSocketOptions {
    /// A `URL` object as its text.
    pub url: Given,
    /// `options.WebSocket`.
    pub web_socket: Given,
    /// The host's global `WebSocket`.
    pub global_web_socket: Given,
    pub max_delay_ms: Given,
    /// Each entry as a JS number; `NaN` for one that is not a number.
    pub terminal_close_codes: GivenList<f64>,
    pub on_open: Given,
}

/// The WebSocket constructor a transport uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebSocketClass {
    /// `options.WebSocket`.
    Given,
    /// The host's, when `options.WebSocket` is `undefined`.
    Global,
}

/// The validated options the policy needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSocketConfig {
    max_delay_ms: u64,
    terminal_close_codes: Vec<u16>,
    has_on_open: bool,
}

impl WebSocketConfig {
    /// Checks the options, each in turn: `url` a string or a `URL`; the
    /// constructor (`options.WebSocket`, else the host's) a function;
    /// `maxDelayMs` left out or a number; `terminalCloseCodes` left out or
    /// an array (an entry that is not a number is not an integer);
    /// `onOpen` left out or a function; then their values ([`Self::new`]).
    pub fn from_options(
        options: &WebSocketOptions,
    ) -> Result<(WebSocketConfig, WebSocketClass), ConfigError> {
        if !matches!(options.url, Given::Text(_)) {
            return Err(ConfigError::Url);
        }
        let (class, constructor) = match options.web_socket {
            Given::Undefined => (WebSocketClass::Global, &options.global_web_socket),
            _ => (WebSocketClass::Given, &options.web_socket),
        };
        if !matches!(constructor, Given::Function) {
            return Err(ConfigError::NoWebSocket);
        }
        let max_delay_ms = match options.max_delay_ms {
            Given::Undefined => None,
            Given::Number(ms) => Some(ms),
            _ => return Err(ConfigError::MaxDelay),
        };
        let codes = match &options.terminal_close_codes {
            GivenList::Undefined => None,
            GivenList::Items(codes) => Some(codes.as_slice()),
            GivenList::NotList => return Err(ConfigError::TerminalCloseCodes),
        };
        let has_on_open = optional_function(&options.on_open, ConfigError::OnOpen)?;
        let config = WebSocketConfig::new(max_delay_ms, codes, has_on_open)?;
        Ok((config, class))
    }

    /// `max_delay_ms`: `maxDelayMs` as a JS number (`None`: left out),
    /// greater than 0 (`Infinity` is allowed: no cap); a fraction is rounded
    /// up to whole ms. `terminal_close_codes`: each entry as a JS number
    /// (`None`: left out; a driver passes `NaN` for an entry that is not a
    /// number), each an integer. `has_on_open`: an `onOpen` hook is given.
    pub fn new(
        max_delay_ms: Option<f64>,
        terminal_close_codes: Option<&[f64]>,
        has_on_open: bool,
    ) -> Result<Self, ConfigError> {
        let max_delay_ms = match max_delay_ms {
            None => DEFAULT_MAX_DELAY_MS,
            // As the JS `!(x > 0)`: NaN is refused too.
            Some(ms) if ms.is_nan() || ms <= 0.0 => return Err(ConfigError::MaxDelay),
            // Saturating: Infinity and anything past u64 become u64::MAX.
            Some(ms) => (ceil_ms(ms) as u64).max(1),
        };
        let mut codes = Vec::new();
        for &code in terminal_close_codes.unwrap_or(&[]) {
            if !code.is_finite() || trunc_f64(code) != code {
                return Err(ConfigError::TerminalCloseCodes);
            }
            // A close code is an unsigned short: an integer outside that
            // range can never match, so it is dropped here.
            if (0.0..=f64::from(u16::MAX)).contains(&code) {
                codes.push(code as u16);
            }
        }
        Ok(WebSocketConfig {
            max_delay_ms,
            terminal_close_codes: codes,
            has_on_open,
        })
    }

    /// The cap of the reconnect delay.
    pub fn max_delay_ms(&self) -> u64 {
        self.max_delay_ms
    }
}

impl Default for WebSocketConfig {
    fn default() -> Self {
        WebSocketConfig {
            max_delay_ms: DEFAULT_MAX_DELAY_MS,
            terminal_close_codes: Vec::new(),
            has_on_open: false,
        }
    }
}

/// `f64::ceil` and `f64::trunc` are std-only; the values here are positive
/// or checked for finiteness first.
fn trunc_f64(x: f64) -> f64 {
    if x.abs() >= 4_503_599_627_370_496.0 {
        x // 2^52 and beyond: already an integer
    } else {
        (x as i64) as f64
    }
}

fn ceil_ms(x: f64) -> f64 {
    let t = trunc_f64(x);
    if t < x {
        t + 1.0
    } else {
        t
    }
}

/// One socket, numbered from 1 in the order the policy asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// Why the transport stopped for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// [`WebSocketPolicy::close`] was called.
    Closed,
    /// The socket closed with a code from `terminalCloseCodes`.
    TerminalCloseCode(u16),
    /// `onOpen` rejected (e.g. authentication failed).
    OnOpenRejected,
}

/// Work for the driver, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create a socket now (`new WebSocket(url, protocols)`) and report its
    /// events with this id. If the constructor throws, report
    /// [`WebSocketPolicy::handle_connect_failed`] (the driver may treat a
    /// throw on the very first connect as a configuration error instead).
    Connect { conn: ConnId },
    /// The socket is open: call `onOpen(socket)` and report how it settled
    /// with [`WebSocketPolicy::handle_on_open`].
    CallOnOpen { conn: ConnId },
    /// Send this text on the socket now.
    Send { conn: ConnId, text: String },
    /// Hand this text to the bridge (`Toolmark::handle_inbound`).
    Deliver { text: String },
    /// Close this socket (with this code, if any). No `close` event of it
    /// needs reporting afterwards.
    Close { conn: ConnId, code: Option<u16> },
    /// The transport stopped for good: clear the timer, detach the bridge's
    /// listeners. Comes once, last.
    Stopped { reason: StopReason },
}

/// A frame as the driver received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A text frame.
    Text(String),
    /// A binary frame (`ArrayBuffer`, `Blob`): never read.
    Binary,
    /// A text frame the driver measured (the JS string's `length`) and found
    /// over [`MAX_FRAME_UTF16_UNITS`] without copying it
    /// ([`exceeds_frame_limit_units`]).
    TooLong { units: usize },
    /// A text frame of `units` UTF-16 code units the driver did not copy
    /// because [`WebSocketPolicy::reads`] said it would be dropped unread,
    /// or of `bytes` UTF-8 bytes (measured outside wasm memory) because
    /// [`WebSocketPolicy::holds`] said it is too long to hold.
    Unread { units: usize, bytes: Option<usize> },
}

/// What became of an inbound frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// Queued as [`Action::Deliver`].
    Delivered,
    /// Held until `onOpen` settles.
    Held,
    /// Dropped, unparsed.
    Dropped(DropReason),
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    Binary,
    /// More than [`MAX_FRAME_UTF16_UNITS`] UTF-16 code units.
    TooLong {
        units: usize,
    },
    /// From a socket that is no longer the current one.
    StaleConnection,
    /// The transport has stopped.
    Stopped,
    /// Longer than [`MAX_HELD_BYTES`] while `onOpen` is pending.
    TooLongToHold,
}

/// Why the transport's `send` refuses a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendRefused {
    /// The transport stopped ([`WebSocketPolicy::send`] after it).
    Stopped,
    /// `JSON.stringify` wrote no text for it (`undefined`, a function, a
    /// symbol).
    NotJson,
}

impl SendRefused {
    /// The code `send` throws with.
    pub fn thrown_code(self) -> ThrownErrorCode {
        match self {
            SendRefused::Stopped => ThrownErrorCode::TransportClosed,
            SendRefused::NotJson => ThrownErrorCode::InvalidArgument,
        }
    }

    /// The error text, as the JS transport has it.
    pub fn message(self) -> &'static str {
        match self {
            SendRefused::Stopped => "websocketTransport: closed, not reconnecting",
            SendRefused::NotJson => "websocketTransport: message is not JSON-serializable",
        }
    }
}

/// Whether a socket whose `readyState` is `ready_state` is closing or
/// closed (2 or 3), so that a send would be lost: its `close` event has not
/// been handled yet. An unknown state (a host's socket without
/// `readyState`) counts as open.
pub fn socket_closing(ready_state: Option<f64>) -> bool {
    matches!(ready_state, Some(state) if state == 2.0 || state == 3.0)
}

/// UTF-16 length of `text`, counted without allocating: one unit per
/// character, two for a character beyond U+FFFF (4 UTF-8 bytes).
pub fn utf16_len(text: &str) -> usize {
    text.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// Whether a text frame of `units` UTF-16 code units is dropped.
pub fn exceeds_frame_limit_units(units: usize) -> bool {
    units > MAX_FRAME_UTF16_UNITS
}

/// The frame rule on a Rust string: its UTF-16 length, decided from the
/// byte length alone when that settles it (a code unit takes 1 to 3 UTF-8
/// bytes, so `bytes / 3 <= units <= bytes`), else counted.
pub fn frame_units_over_limit(text: &str) -> Option<usize> {
    let bytes = text.len();
    if bytes <= MAX_FRAME_UTF16_UNITS {
        return None;
    }
    let units = utf16_len(text);
    exceeds_frame_limit_units(units).then_some(units)
}

/// What a text states of a page's registry, read from its start as the
/// bridge writes it (`{"type":"manifest","protocol":1,"clientId":"…"`):
/// a `manifest` or a `changed`, and the page's `clientId`. `None` for any
/// other text (an app's own message is never superseded).
pub fn registry_state(text: &str) -> Option<(RegistryState, &str)> {
    let (kind, rest) = if let Some(rest) = text.strip_prefix("{\"type\":\"manifest\",") {
        (RegistryState::Manifest, rest)
    } else {
        (
            RegistryState::Changed,
            text.strip_prefix("{\"type\":\"changed\",")?,
        )
    };
    let rest = rest.strip_prefix("\"protocol\":1,\"clientId\":\"")?;
    let id = rest.get(..rest.find('"')?)?;
    // An id with an escape is not read (the page's ids have none).
    (!id.contains('\\')).then_some((kind, id))
}

/// The kind of a registry state ([`registry_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryState {
    /// The tool list: supersedes the page's earlier states of both kinds.
    Manifest,
    /// A revision without the list: supersedes earlier `changed`s only.
    Changed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Waiting for the reconnect timer.
    Waiting,
    /// `Connect` asked for, no `open` yet.
    Connecting(ConnId),
    /// Open, `onOpen` pending; inbound frames are held.
    Opening(ConnId, Held),
    /// Open and `onOpen` settled, since this time.
    Ready(ConnId, u64),
    /// Was ready since this time; its socket was found closing before its
    /// `close` event ([`WebSocketPolicy::handle_unsent`]): sends are
    /// buffered until a reconnect is ready.
    Closing(ConnId, u64),
    Stopped,
}

/// Inbound texts held while `onOpen` is pending, and their bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Held {
    texts: Queue<String>,
    bytes: usize,
}

impl Held {
    /// Holds `text`, evicting the oldest until it fits the bounds; returns
    /// how many were evicted. `text` must fit [`MAX_HELD_BYTES`] alone.
    fn push(&mut self, text: String) -> u64 {
        let mut evicted = 0;
        while self.texts.len() >= MAX_HELD || self.bytes.saturating_add(text.len()) > MAX_HELD_BYTES
        {
            let Some(oldest) = self.texts.pop_front() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(oldest.len());
            evicted += 1;
        }
        self.bytes = self.bytes.saturating_add(text.len());
        self.texts.push_back(text);
        evicted
    }
}

/// The policy of one `websocketTransport`. See the module docs.
#[derive(Debug)]
pub struct WebSocketPolicy {
    config: WebSocketConfig,
    state: State,
    last_conn: u64,
    /// The next reconnect delay (before the cap).
    delay: u64,
    reconnect_at: Option<u64>,
    buffer: Queue<String>,
    actions: Queue<Action>,
    /// Inbound frames evicted or dropped by the bounds on held frames.
    held_dropped: u64,
    /// The connection state, and the states not yet told.
    status: StatusLog,
    /// Sockets asked for since the start or the last ready one.
    attempts: u32,
}

impl WebSocketPolicy {
    /// A policy that asks for its first socket at once ([`Action::Connect`]).
    pub fn new(config: WebSocketConfig) -> Self {
        let mut policy = WebSocketPolicy {
            config,
            state: State::Waiting,
            last_conn: 0,
            delay: FIRST_DELAY_MS,
            reconnect_at: None,
            buffer: Queue::new(),
            actions: Queue::new(),
            held_dropped: 0,
            status: StatusLog::new(Status::Connecting { attempt: 1 }),
            attempts: 0,
        };
        policy.connect();
        policy
    }

    /// The next piece of work for the driver.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next connection state to tell, oldest first; drained before
    /// [`WebSocketPolicy::poll_action`].
    pub fn poll_status(&mut self) -> Option<Status> {
        self.status.poll()
    }

    /// The connection state now.
    pub fn status(&self) -> &Status {
        self.status.now()
    }

    /// When to call [`WebSocketPolicy::handle_timeout`] (the scheduled
    /// reconnect), if at all.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.reconnect_at
    }

    /// Open and `onOpen` settled: sends go straight out.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready(..))
    }

    /// Stopped for good.
    pub fn is_stopped(&self) -> bool {
        self.state == State::Stopped
    }

    /// The delay the next reconnect would wait (the cap applied).
    pub fn next_delay_ms(&self) -> u64 {
        self.delay.min(self.config.max_delay_ms)
    }

    /// Inbound frames lost to the bounds on frames held while `onOpen` is
    /// pending (evicted, or too long to hold), since the transport began.
    pub fn held_dropped(&self) -> u64 {
        self.held_dropped
    }

    /// Inbound texts held now (while `onOpen` is pending) and their UTF-8 bytes.
    pub fn held(&self) -> (usize, usize) {
        match &self.state {
            State::Opening(_, held) => (held.texts.len(), held.bytes),
            _ => (0, 0),
        }
    }

    /// Whether a text frame of `units` UTF-16 code units from `conn` needs
    /// its text read: false when it is dropped whatever it says (too long,
    /// a stale socket, stopped). The driver then reports it as
    /// [`Frame::Unread`] without copying it. (A frame longer than
    /// [`MAX_HELD_BYTES`] in UTF-16 units would be too long to hold, but
    /// that bound is the frame limit itself.)
    pub fn reads(&self, conn: ConnId, units: usize) -> bool {
        !exceeds_frame_limit_units(units)
            && self.current() == Some(conn)
            && matches!(
                self.state,
                State::Opening(..) | State::Ready(..) | State::Closing(..)
            )
    }

    /// Whether a frame of `bytes` UTF-8 bytes can be held or delivered now:
    /// false while `onOpen` is pending and it is longer than
    /// [`MAX_HELD_BYTES`]. The driver then reports it as [`Frame::Unread`].
    pub fn holds(&self, bytes: usize) -> bool {
        !(matches!(self.state, State::Opening(..)) && bytes > MAX_HELD_BYTES)
    }

    /// Texts waiting for a ready socket, oldest first.
    pub fn buffered(&self) -> impl Iterator<Item = &str> {
        self.buffer.iter().map(String::as_str)
    }

    fn current(&self) -> Option<ConnId> {
        match &self.state {
            State::Connecting(conn)
            | State::Opening(conn, _)
            | State::Ready(conn, _)
            | State::Closing(conn, _) => Some(*conn),
            State::Waiting | State::Stopped => None,
        }
    }

    fn connect(&mut self) {
        self.last_conn += 1;
        let conn = ConnId(self.last_conn);
        self.state = State::Connecting(conn);
        self.attempts = self.attempts.saturating_add(1);
        self.status.tell(Status::Connecting {
            attempt: self.attempts,
        });
        self.actions.push_back(Action::Connect { conn });
    }

    /// The connection (or attempt) ended with `code` and `reason`; a
    /// reconnect is scheduled.
    fn schedule_reconnect(&mut self, code: Option<u16>, reason: &str, now: u64) {
        self.status.tell(Status::closed(code, reason, false));
        let wait = self.next_delay_ms();
        self.reconnect_at = Some(now.saturating_add(wait));
        self.delay = self.delay.saturating_mul(2).min(self.config.max_delay_ms);
        self.state = State::Waiting;
        self.status.tell(Status::Reconnecting {
            attempt: self.attempts.saturating_add(1),
            delay_ms: Some(wait),
        });
    }

    /// Stops for good, told as a terminal `closed` with `code` and `why`:
    /// the buffer is dropped, and so are the sends and deliveries queued
    /// and not carried out yet (a subscriber that closes while the buffer
    /// is being flushed sends none of it).
    fn stop(&mut self, reason: StopReason, code: Option<u16>, why: &str) {
        self.status.tell(Status::closed(code, why, true));
        self.state = State::Stopped;
        self.reconnect_at = None;
        self.buffer.clear();
        self.actions
            .retain(|action| !matches!(action, Action::Send { .. } | Action::Deliver { .. }));
        self.actions.push_back(Action::Stopped { reason });
    }

    fn become_ready(&mut self, conn: ConnId, mut held: Held, now: u64) {
        self.state = State::Ready(conn, now);
        self.attempts = 0;
        self.status.tell(Status::Open);
        for text in self.buffer.drain(..) {
            self.actions.push_back(Action::Send { conn, text });
        }
        for text in held.texts.drain(..) {
            self.actions.push_back(Action::Deliver { text });
        }
    }

    /// The reconnect timer fired (or any time at or after
    /// [`WebSocketPolicy::poll_timeout`]).
    pub fn handle_timeout(&mut self, now: u64) {
        if self.reconnect_at.is_some_and(|at| now >= at) {
            self.reconnect_at = None;
            if self.state == State::Waiting {
                self.connect();
            }
        }
    }

    /// The socket's constructor threw: try again later.
    pub fn handle_connect_failed(&mut self, conn: ConnId, now: u64) {
        if self.state == State::Connecting(conn) {
            self.schedule_reconnect(None, CONSTRUCTOR_THREW, now);
        }
    }

    /// The socket's `open` event.
    pub fn handle_open(&mut self, conn: ConnId, now: u64) {
        if self.state != State::Connecting(conn) {
            return;
        }
        if self.config.has_on_open {
            self.state = State::Opening(conn, Held::default());
            self.actions.push_back(Action::CallOnOpen { conn });
        } else {
            self.become_ready(conn, Held::default(), now);
        }
    }

    /// `onOpen` settled: `Ok` when it resolved, `Err` when it rejected or
    /// threw (the transport stops and the socket is closed).
    pub fn handle_on_open(&mut self, conn: ConnId, settled: Result<(), ()>, now: u64) {
        let State::Opening(current, held) = &mut self.state else {
            return;
        };
        if *current != conn {
            return;
        }
        let held = core::mem::take(held);
        match settled {
            Ok(()) => self.become_ready(conn, held, now),
            Err(()) => {
                self.actions.push_back(Action::Close { conn, code: None });
                self.stop(StopReason::OnOpenRejected, None, ON_OPEN_REJECTED);
            }
        }
    }

    /// The socket's `message` event. A [`Frame::Text`] over the limit is
    /// measured without copying ([`frame_units_over_limit`]).
    pub fn handle_message(&mut self, conn: ConnId, frame: Frame) -> Inbound {
        if self.state == State::Stopped {
            return Inbound::Dropped(DropReason::Stopped);
        }
        if self.current() != Some(conn) {
            return Inbound::Dropped(DropReason::StaleConnection);
        }
        let text = match frame {
            Frame::Binary => return Inbound::Dropped(DropReason::Binary),
            Frame::TooLong { units } => return Inbound::Dropped(DropReason::TooLong { units }),
            Frame::Unread { units, bytes } => return self.drop_unread(units, bytes),
            Frame::Text(text) => text,
        };
        if let Some(units) = frame_units_over_limit(&text) {
            return Inbound::Dropped(DropReason::TooLong { units });
        }
        if !self.holds(text.len()) {
            self.held_dropped = self.held_dropped.saturating_add(1);
            return Inbound::Dropped(DropReason::TooLongToHold);
        }
        match &mut self.state {
            State::Ready(..) | State::Closing(..) => {
                self.actions.push_back(Action::Deliver { text });
                Inbound::Delivered
            }
            State::Opening(_, held) => {
                let evicted = held.push(text);
                self.held_dropped = self.held_dropped.saturating_add(evicted);
                Inbound::Held
            }
            // A frame before `open` cannot happen on a real socket; held
            // nowhere, it is dropped as not yet belonging to a connection.
            State::Connecting(_) | State::Waiting | State::Stopped => {
                Inbound::Dropped(DropReason::StaleConnection)
            }
        }
    }

    /// A frame the driver did not read ([`WebSocketPolicy::reads`]), from
    /// the current socket: why it is dropped.
    fn drop_unread(&mut self, units: usize, bytes: Option<usize>) -> Inbound {
        if exceeds_frame_limit_units(units) {
            return Inbound::Dropped(DropReason::TooLong { units });
        }
        if bytes.is_some_and(|bytes| !self.holds(bytes)) {
            self.held_dropped = self.held_dropped.saturating_add(1);
            return Inbound::Dropped(DropReason::TooLongToHold);
        }
        // Not yet open (or a frame the driver should have read): dropped
        // as not belonging to a connection that takes frames.
        Inbound::Dropped(DropReason::StaleConnection)
    }

    /// The socket's `close` event with its code and reason. A code from
    /// `terminalCloseCodes` stops the transport; any other schedules a
    /// reconnect, after resetting the delay if the connection proved itself.
    pub fn handle_close(&mut self, conn: ConnId, code: u16, reason: &str, now: u64) {
        if self.current() != Some(conn) {
            return;
        }
        if let State::Ready(_, since) | State::Closing(_, since) = self.state {
            if now.saturating_sub(since) >= PROVEN_AFTER_MS {
                self.delay = FIRST_DELAY_MS;
            }
        }
        if self.config.terminal_close_codes.contains(&code) {
            self.stop(StopReason::TerminalCloseCode(code), Some(code), reason);
        } else {
            self.schedule_reconnect(Some(code), reason, now);
        }
    }

    /// Sends `text` now if ready, else buffers it (at most [`MAX_BUFFERED`],
    /// oldest evicted; a page's registry state supersedes its earlier ones,
    /// see the module docs). An error once stopped.
    pub fn send(&mut self, text: String) -> Result<(), SendRefused> {
        match self.state {
            State::Stopped => Err(SendRefused::Stopped),
            State::Ready(conn, _) => {
                self.actions.push_back(Action::Send { conn, text });
                Ok(())
            }
            _ => {
                if let Some((kind, page)) = registry_state(&text) {
                    self.buffer.retain(|old| match registry_state(old) {
                        Some((old_kind, old_page)) if old_page == page => {
                            kind == RegistryState::Changed && old_kind == RegistryState::Manifest
                        }
                        _ => true,
                    });
                }
                self.buffer.push_back(text);
                if self.buffer.len() > MAX_BUFFERED {
                    self.buffer.pop_front();
                }
                Ok(())
            }
        }
    }

    /// A [`Action::Send`] the driver did not carry out: the socket of
    /// `conn` was found closing ([`socket_closing`]), where a send is lost
    /// without an error. The text and every send still queued for that
    /// socket go back to the front of the buffer, in their order (at most
    /// [`MAX_BUFFERED`], oldest evicted); the connection is no longer
    /// ready, so later sends wait too, for the reconnect its `close` event
    /// brings. Dropped once stopped.
    pub fn handle_unsent(&mut self, conn: ConnId, text: String) {
        if self.state == State::Stopped {
            return;
        }
        if let State::Ready(ready, since) = self.state {
            if ready == conn {
                self.state = State::Closing(conn, since);
            }
        }
        // The text and the sends queued after it, in order, then what was
        // buffered already (through `send`: the oldest evicted past the bound).
        let earlier = core::mem::take(&mut self.buffer);
        self.buffer.push_back(text);
        let to_conn =
            |action: &Action| matches!(action, Action::Send { conn: to, .. } if *to == conn);
        for action in self.actions.iter().filter(|a| to_conn(a)) {
            if let Action::Send { text, .. } = action {
                self.buffer.push_back(text.clone());
            }
        }
        self.actions.retain(|action| !to_conn(action));
        while self.buffer.len() > MAX_BUFFERED {
            self.buffer.pop_front();
        }
        for text in earlier.iter() {
            let _ = self.send(text.clone());
        }
    }

    /// Stops for good: the buffer is dropped, the current socket (if any)
    /// closed with [`NORMAL_CLOSURE`]. A second call does nothing.
    pub fn close(&mut self) {
        if self.state == State::Stopped {
            return;
        }
        if let Some(conn) = self.current() {
            self.actions.push_back(Action::Close {
                conn,
                code: Some(NORMAL_CLOSURE),
            });
        }
        self.stop(StopReason::Closed, Some(NORMAL_CLOSURE), CLOSED_BY_CLOSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON string of `n` times `c`, quotes included.
    fn json_string(c: &str, n: usize) -> String {
        format!("\"{}\"", c.repeat(n))
    }

    fn drain(p: &mut WebSocketPolicy) -> Vec<Action> {
        core::iter::from_fn(|| p.poll_action()).collect()
    }

    fn statuses(p: &mut WebSocketPolicy) -> Vec<Status> {
        core::iter::from_fn(|| p.poll_status()).collect()
    }

    fn closed(code: Option<u16>, reason: &str, terminal: bool) -> Status {
        Status::closed(code, reason, terminal)
    }

    fn reconnecting(attempt: u32, delay: u64) -> Status {
        Status::Reconnecting {
            attempt,
            delay_ms: Some(delay),
        }
    }

    #[test]
    fn a_server_that_refuses_is_told_attempt_by_attempt_with_the_schedule() {
        let mut p = WebSocketPolicy::new(config(Some(1500.0), &[], false));
        let mut conn = connect_id(&drain(&mut p));
        assert_eq!(statuses(&mut p), [Status::Connecting { attempt: 1 }]);
        let mut told = Vec::new();
        let mut now = 0;
        for _ in 0..4 {
            p.handle_close(conn, 1006, "", now);
            told.extend(statuses(&mut p));
            now = p.poll_timeout().unwrap();
            conn = fire(&mut p);
            told.extend(statuses(&mut p));
        }
        assert_eq!(
            told,
            [
                closed(Some(1006), "", false),
                reconnecting(2, 500),
                Status::Connecting { attempt: 2 },
                closed(Some(1006), "", false),
                reconnecting(3, 1000),
                Status::Connecting { attempt: 3 },
                closed(Some(1006), "", false),
                reconnecting(4, 1500),
                Status::Connecting { attempt: 4 },
                closed(Some(1006), "", false),
                reconnecting(5, 1500),
                Status::Connecting { attempt: 5 },
            ]
        );
        assert_eq!(p.status(), &Status::Connecting { attempt: 5 });
    }

    #[test]
    fn a_dropped_connection_counts_attempts_from_one_again() {
        let (mut p, conn) = ready(config(None, &[], false), 0);
        assert_eq!(
            statuses(&mut p),
            [Status::Connecting { attempt: 1 }, Status::Open]
        );
        p.handle_close(conn, 1001, "going away", 20_000);
        let conn = fire(&mut p);
        p.handle_open(conn, 20_600);
        assert_eq!(
            statuses(&mut p),
            [
                closed(Some(1001), "going away", false),
                reconnecting(1, 500),
                Status::Connecting { attempt: 1 },
                Status::Open,
            ]
        );
        assert_eq!(p.status(), &Status::Open);
    }

    #[test]
    fn open_is_told_only_once_on_open_settles_and_before_what_was_held() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 1);
        assert_eq!(statuses(&mut p), [Status::Connecting { attempt: 1 }]);
        drain(&mut p);
        p.handle_message(conn, Frame::Text("1".into()));
        p.handle_on_open(conn, Ok(()), 2);
        assert_eq!(statuses(&mut p), [Status::Open]);
        assert_eq!(drain(&mut p), [Action::Deliver { text: "1".into() }]);
    }

    #[test]
    fn every_stop_is_a_terminal_closed_told_before_stopped() {
        // A terminal close code, with the socket's reason.
        let (mut p, conn) = ready(config(None, &[4001.0], false), 0);
        statuses(&mut p);
        p.handle_close(conn, 4001, "unauthorized", 5);
        assert_eq!(statuses(&mut p), [closed(Some(4001), "unauthorized", true)]);
        // A rejecting onOpen.
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 1);
        p.handle_on_open(conn, Err(()), 2);
        assert_eq!(
            statuses(&mut p),
            [
                Status::Connecting { attempt: 1 },
                closed(None, ON_OPEN_REJECTED, true)
            ]
        );
        // close(), while waiting to reconnect; a second close() tells nothing.
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.handle_close(conn, 1006, "", 0);
        statuses(&mut p);
        p.close();
        p.close();
        assert_eq!(
            statuses(&mut p),
            [closed(Some(NORMAL_CLOSURE), CLOSED_BY_CLOSE, true)]
        );
        assert_eq!(p.status(), &closed(Some(1000), CLOSED_BY_CLOSE, true));
        // A stale socket's close tells nothing.
        p.handle_close(conn, 1006, "", 1);
        assert_eq!(statuses(&mut p), []);
    }

    #[test]
    fn a_throwing_constructor_is_a_failed_attempt_without_a_code() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.handle_connect_failed(conn, 0);
        assert_eq!(
            statuses(&mut p),
            [
                Status::Connecting { attempt: 1 },
                closed(None, CONSTRUCTOR_THREW, false),
                reconnecting(2, 500)
            ]
        );
    }

    /// What `close()` of a transport with an open socket hands out.
    fn closed_by_close(conn: ConnId) -> [Action; 2] {
        [
            Action::Close {
                conn,
                code: Some(1000),
            },
            Action::Stopped {
                reason: StopReason::Closed,
            },
        ]
    }

    fn connect_id(actions: &[Action]) -> ConnId {
        actions
            .iter()
            .find_map(|a| match a {
                Action::Connect { conn } => Some(*conn),
                _ => None,
            })
            .expect("a Connect action")
    }

    fn config(max: Option<f64>, codes: &[f64], on_open: bool) -> WebSocketConfig {
        WebSocketConfig::new(max, Some(codes), on_open).unwrap()
    }

    /// A policy whose first socket is open and ready at `now`.
    fn ready(config: WebSocketConfig, now: u64) -> (WebSocketPolicy, ConnId) {
        let mut p = WebSocketPolicy::new(config);
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, now);
        assert!(p.is_ready());
        drain(&mut p);
        (p, conn)
    }

    /// Lets the reconnect timer fire; returns the new socket's id.
    fn fire(p: &mut WebSocketPolicy) -> ConnId {
        let at = p.poll_timeout().expect("a reconnect is scheduled");
        p.handle_timeout(at);
        connect_id(&drain(p))
    }

    fn sends(actions: &[Action]) -> Vec<(ConnId, &str)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Send { conn, text } => Some((*conn, text.as_str())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_socket_found_closing_gets_its_sends_back_in_the_buffer_for_the_reconnect() {
        assert!(socket_closing(Some(2.0)) && socket_closing(Some(3.0)));
        assert!(!socket_closing(Some(1.0)) && !socket_closing(None));
        let (mut p, conn) = ready(config(None, &[], false), 0);
        for text in ["a", "b", "c"] {
            p.send(text.into()).unwrap();
        }
        // The driver carries out the first send, finds the socket closing.
        assert_eq!(
            p.poll_action(),
            Some(Action::Send {
                conn,
                text: "a".into()
            })
        );
        p.handle_unsent(conn, "a".into());
        assert_eq!(drain(&mut p), [], "the sends queued after it wait too");
        assert!(!p.is_ready());
        p.send("d".into()).unwrap();
        assert_eq!(p.buffered().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(drain(&mut p), []);
        // A frame still read from it reaches the page.
        assert_eq!(
            p.handle_message(conn, Frame::Text("1".into())),
            Inbound::Delivered
        );
        drain(&mut p);
        statuses(&mut p);
        p.handle_close(conn, 1012, "restart", 10);
        assert_eq!(
            statuses(&mut p),
            [closed(Some(1012), "restart", false), reconnecting(1, 500)]
        );
        let next = fire(&mut p);
        p.handle_open(next, 600);
        let actions = drain(&mut p);
        assert_eq!(
            sends(&actions),
            [(next, "a"), (next, "b"), (next, "c"), (next, "d")]
        );
    }

    #[test]
    fn a_flush_into_a_socket_closing_as_on_open_settles_waits_for_the_reconnect() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.send("manifest".into()).unwrap();
        p.handle_open(conn, 1);
        drain(&mut p);
        p.handle_message(conn, Frame::Text("ok".into()));
        p.handle_on_open(conn, Ok(()), 2);
        let flushed = p.poll_action();
        assert_eq!(
            flushed,
            Some(Action::Send {
                conn,
                text: "manifest".into()
            })
        );
        p.handle_unsent(conn, "manifest".into());
        assert_eq!(
            drain(&mut p),
            [Action::Deliver { text: "ok".into() }],
            "what was held is still delivered"
        );
        p.handle_close(conn, 1012, "restart", 3);
        let next = fire(&mut p);
        p.handle_open(next, 600);
        p.handle_on_open(next, Ok(()), 601);
        assert_eq!(sends(&drain(&mut p)), [(next, "manifest")]);
    }

    #[test]
    fn an_unsent_text_is_dropped_once_stopped_and_kept_within_the_buffer_bound() {
        let (mut p, conn) = ready(config(None, &[], false), 0);
        p.close();
        drain(&mut p);
        p.handle_unsent(conn, "late".into());
        assert_eq!(p.buffered().count(), 0);

        let (mut p, conn) = ready(config(None, &[], false), 0);
        for n in 0..MAX_BUFFERED {
            p.send(n.to_string()).unwrap();
        }
        let first = p.poll_action();
        assert!(matches!(first, Some(Action::Send { .. })));
        p.handle_unsent(conn, "0".into());
        p.send("new".into()).unwrap();
        let buffered: Vec<_> = p.buffered().collect();
        assert_eq!(buffered.len(), MAX_BUFFERED);
        assert_eq!((buffered[0], buffered[MAX_BUFFERED - 1]), ("1", "new"));

        // More queued for the socket than the buffer holds: the newest stay.
        let (mut p, conn) = ready(config(None, &[], false), 0);
        for n in 0..3 * MAX_BUFFERED {
            p.send(n.to_string()).unwrap();
        }
        let first = p.poll_action();
        assert!(matches!(first, Some(Action::Send { .. })));
        p.handle_unsent(conn, "0".into());
        let buffered: Vec<_> = p.buffered().collect();
        assert_eq!(buffered.len(), MAX_BUFFERED);
        assert_eq!(buffered[0], (2 * MAX_BUFFERED).to_string());
        p.send("new".into()).unwrap();
        assert_eq!(p.buffered().count(), MAX_BUFFERED);
    }

    #[test]
    fn options_are_validated_with_the_js_texts() {
        assert_eq!(
            WebSocketConfig::new(None, None, false)
                .unwrap()
                .max_delay_ms(),
            30_000
        );
        for bad in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            let err = WebSocketConfig::new(Some(bad), None, false).unwrap_err();
            assert_eq!(err, ConfigError::MaxDelay);
            assert_eq!(
                err.message(),
                "websocketTransport: maxDelayMs must be a positive number"
            );
        }
        assert_eq!(
            config(Some(f64::INFINITY), &[], false).max_delay_ms(),
            u64::MAX
        );
        assert_eq!(config(Some(0.2), &[], false).max_delay_ms(), 1);
        assert_eq!(config(Some(1500.5), &[], false).max_delay_ms(), 1501);
        for bad in [1000.5, f64::NAN, f64::INFINITY] {
            let err = WebSocketConfig::new(None, Some(&[4000.0, bad]), false).unwrap_err();
            assert_eq!(err, ConfigError::TerminalCloseCodes);
            assert_eq!(
                err.message(),
                "websocketTransport: terminalCloseCodes must be an array of integer close codes"
            );
        }
        // Integers out of the unsigned-short range are valid and never match.
        assert_eq!(
            config(None, &[-1.0, 70000.0, 4001.0], false).terminal_close_codes,
            [4001]
        );
        assert!(ConfigError::Url
            .message()
            .contains("url must be a string or URL"));
        assert!(ConfigError::NoWebSocket
            .message()
            .contains("no WebSocket implementation"));
        assert!(ConfigError::OnOpen
            .message()
            .contains("onOpen must be a function"));
    }

    #[test]
    fn a_host_without_a_websocket_is_host_unsupported_and_a_bad_option_invalid_argument() {
        use ConfigError::*;
        assert_eq!(NoWebSocket.thrown_code(), ThrownErrorCode::HostUnsupported);
        for refused in [Url, MaxDelay, TerminalCloseCodes, OnOpen] {
            assert_eq!(refused.thrown_code(), ThrownErrorCode::InvalidArgument);
        }
    }

    /// Options with every one valid: a string url, the host's WebSocket.
    fn options() -> WebSocketOptions {
        WebSocketOptions {
            url: Given::Text("wss://a.test/".into()),
            web_socket: Given::Undefined,
            global_web_socket: Given::Function,
            max_delay_ms: Given::Undefined,
            terminal_close_codes: GivenList::Undefined,
            on_open: Given::Undefined,
        }
    }

    #[test]
    fn options_are_checked_by_their_js_types_in_order() {
        let by_default = WebSocketConfig::from_options(&options()).unwrap();
        assert_eq!(
            by_default,
            (WebSocketConfig::default(), WebSocketClass::Global)
        );
        let given = WebSocketOptions {
            url: Given::Text("wss://b.test/".into()),
            web_socket: Given::Function,
            global_web_socket: Given::Undefined,
            max_delay_ms: Given::Number(1500.5),
            terminal_close_codes: GivenList::Items(vec![4001.0]),
            on_open: Given::Function,
        };
        assert_eq!(
            WebSocketConfig::from_options(&given).unwrap(),
            (config(Some(1500.5), &[4001.0], true), WebSocketClass::Given)
        );
        let refused = |change: fn(&mut WebSocketOptions)| {
            let mut options = options();
            change(&mut options);
            WebSocketConfig::from_options(&options).unwrap_err()
        };
        type Change = fn(&mut WebSocketOptions);
        let refusals: [(ConfigError, &[Change]); 5] = [
            (
                ConfigError::Url,
                &[|o| o.url = Given::Other, |o| o.url = Given::Undefined],
            ),
            // The host's WebSocket only when the option is undefined.
            (
                ConfigError::NoWebSocket,
                &[
                    |o| o.global_web_socket = Given::Undefined,
                    |o| o.web_socket = Given::Null,
                    |o| o.web_socket = Given::Other,
                ],
            ),
            (
                ConfigError::MaxDelay,
                &[
                    |o| o.max_delay_ms = Given::Null,
                    |o| o.max_delay_ms = Given::Text("5".into()),
                    |o| o.max_delay_ms = Given::Number(0.0),
                ],
            ),
            (
                ConfigError::TerminalCloseCodes,
                &[
                    |o| o.terminal_close_codes = GivenList::NotList,
                    |o| o.terminal_close_codes = GivenList::Items(vec![f64::NAN]),
                ],
            ),
            (
                ConfigError::OnOpen,
                &[|o| o.on_open = Given::Null, |o| o.on_open = Given::Other],
            ),
        ];
        for (expected, changes) in refusals {
            for change in changes {
                assert_eq!(refused(*change), expected);
            }
        }
        // In the options' order: the first bad one is the one told.
        assert_eq!(
            refused(|o| {
                o.web_socket = Given::Other;
                o.on_open = Given::Other;
            }),
            ConfigError::NoWebSocket
        );
    }

    #[test]
    fn a_close_without_a_close_code_is_no_status_received() {
        assert_eq!(close_code(Some(4001.0)), 4001);
        for code in [None, Some(-1.0), Some(70000.0), Some(f64::NAN)] {
            assert_eq!(close_code(code), NO_STATUS_RECEIVED, "{code:?}");
        }
    }

    #[test]
    fn the_first_action_is_a_connect() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        assert_eq!(drain(&mut p), [Action::Connect { conn: ConnId(1) }]);
        assert_eq!(p.poll_timeout(), None);
        assert!(!p.is_ready());
    }

    #[test]
    fn reconnects_double_from_500_and_are_capped() {
        let mut p = WebSocketPolicy::new(config(Some(3000.0), &[], false));
        let mut conn = connect_id(&drain(&mut p));
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..6 {
            p.handle_close(conn, 1006, "", now);
            let at = p.poll_timeout().unwrap();
            waits.push(at - now);
            now = at;
            conn = fire(&mut p);
        }
        assert_eq!(waits, [500, 1000, 2000, 3000, 3000, 3000]);
    }

    #[test]
    fn the_cap_bounds_the_first_delay_too() {
        let mut p = WebSocketPolicy::new(config(Some(100.0), &[], false));
        let conn = connect_id(&drain(&mut p));
        p.handle_close(conn, 1006, "", 50);
        assert_eq!(p.poll_timeout(), Some(150));
    }

    #[test]
    fn the_timer_connects_only_when_due() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.handle_close(conn, 1006, "", 1000);
        p.handle_timeout(1499);
        assert!(drain(&mut p).is_empty());
        p.handle_timeout(1500);
        assert_eq!(drain(&mut p), [Action::Connect { conn: ConnId(2) }]);
        assert_eq!(p.poll_timeout(), None);
    }

    #[test]
    fn a_failing_constructor_is_retried_on_the_schedule() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.handle_connect_failed(conn, 0);
        assert_eq!(p.poll_timeout(), Some(500));
        let conn = fire(&mut p);
        p.handle_connect_failed(conn, 500);
        assert_eq!(p.poll_timeout(), Some(1500));
    }

    /// The server accepts and closes at once, forever: the delay must grow.
    #[test]
    fn quick_closes_do_not_hold_the_delay_at_500() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let mut conn = connect_id(&drain(&mut p));
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..10 {
            p.handle_open(conn, now);
            assert!(p.is_ready());
            // Even a message right away proves nothing.
            assert_eq!(
                p.handle_message(conn, Frame::Text("{}".into())),
                Inbound::Delivered
            );
            p.handle_close(conn, 1000, "", now + 5);
            let at = p.poll_timeout().unwrap();
            waits.push(at - (now + 5));
            now = at;
            conn = fire(&mut p);
        }
        assert_eq!(
            waits,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000]
        );
    }

    #[test]
    fn a_connection_closed_just_before_proving_itself_keeps_the_delay() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let mut conn = connect_id(&drain(&mut p));
        for now in [0, 1000] {
            p.handle_close(conn, 1006, "", now);
            conn = fire(&mut p);
        }
        assert_eq!(p.next_delay_ms(), 2000);
        p.handle_open(conn, 10_000);
        p.handle_close(conn, 1006, "", 10_000 + PROVEN_AFTER_MS - 1);
        assert_eq!(p.poll_timeout(), Some(10_000 + PROVEN_AFTER_MS - 1 + 2000));
    }

    #[test]
    fn a_proven_connection_resets_the_delay() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let mut conn = connect_id(&drain(&mut p));
        let mut now = 0;
        for _ in 0..5 {
            p.handle_close(conn, 1006, "", now);
            now = p.poll_timeout().unwrap();
            conn = fire(&mut p);
        }
        assert_eq!(p.next_delay_ms(), 16000);
        p.handle_open(conn, now);
        p.handle_close(conn, 1006, "", now + PROVEN_AFTER_MS);
        assert_eq!(p.poll_timeout(), Some(now + PROVEN_AFTER_MS + 500));
        assert_eq!(p.next_delay_ms(), 1000);
    }

    #[test]
    fn proving_counts_from_ready_not_from_open() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_close(conn, 1006, "", 0);
        let conn = fire(&mut p);
        p.handle_open(conn, 500);
        // onOpen takes 20 s; the connection then lives 1 s.
        p.handle_on_open(conn, Ok(()), 20_500);
        p.handle_close(conn, 1006, "", 21_500);
        assert_eq!(p.poll_timeout(), Some(21_500 + 1000));
    }

    #[test]
    fn terminal_close_codes_stop_the_transport() {
        let (mut p, conn) = ready(config(None, &[4001.0, 4003.0], false), 0);
        p.send("lost".into()).unwrap_or(());
        drain(&mut p);
        p.handle_close(conn, 4003, "", 10);
        assert_eq!(
            drain(&mut p),
            [Action::Stopped {
                reason: StopReason::TerminalCloseCode(4003)
            }]
        );
        assert!(p.is_stopped());
        assert_eq!(p.poll_timeout(), None);
        assert_eq!(p.send("x".into()), Err(SendRefused::Stopped));
        assert_eq!(
            SendRefused::Stopped.message(),
            "websocketTransport: closed, not reconnecting"
        );
        assert_eq!(
            SendRefused::Stopped.thrown_code(),
            ThrownErrorCode::TransportClosed
        );
    }
    #[test]
    fn a_message_json_cannot_write_is_an_invalid_argument() {
        assert_eq!(
            SendRefused::NotJson.thrown_code(),
            ThrownErrorCode::InvalidArgument
        );
        assert_eq!(
            SendRefused::NotJson.message(),
            "websocketTransport: message is not JSON-serializable"
        );
    }

    #[test]
    fn a_non_terminal_code_reconnects() {
        let (mut p, conn) = ready(config(None, &[4001.0], false), 0);
        p.handle_close(conn, 4002, "", 10);
        assert!(!p.is_stopped());
        assert_eq!(p.poll_timeout(), Some(510));
    }

    #[test]
    fn a_rejecting_on_open_stops_and_closes_the_socket() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.send("queued".into()).unwrap();
        p.handle_open(conn, 0);
        assert_eq!(drain(&mut p), [Action::CallOnOpen { conn }]);
        assert_eq!(
            p.handle_message(conn, Frame::Text("\"held\"".into())),
            Inbound::Held
        );
        p.handle_on_open(conn, Err(()), 5);
        assert_eq!(
            drain(&mut p),
            [
                Action::Close { conn, code: None },
                Action::Stopped {
                    reason: StopReason::OnOpenRejected
                }
            ]
        );
        assert!(p.is_stopped());
        assert_eq!(p.buffered().count(), 0);
        // Its close event afterwards changes nothing.
        p.handle_close(conn, 1005, "", 6);
        assert!(drain(&mut p).is_empty());
        assert_eq!(p.poll_timeout(), None);
    }

    #[test]
    fn close_stops_closes_the_socket_with_1000_and_is_idempotent() {
        let (mut p, conn) = ready(WebSocketConfig::default(), 0);
        p.close();
        assert_eq!(drain(&mut p), closed_by_close(conn));
        p.close();
        assert!(drain(&mut p).is_empty());
        assert_eq!(p.send("x".into()), Err(SendRefused::Stopped));
        assert_eq!(
            p.handle_message(conn, Frame::Text("{}".into())),
            Inbound::Dropped(DropReason::Stopped)
        );
    }

    #[test]
    fn close_drops_the_sends_and_deliveries_queued_and_not_carried_out() {
        let mut p = WebSocketPolicy::new(config(None, &[], false));
        let conn = connect_id(&drain(&mut p));
        for n in 0..3 {
            p.send(n.to_string()).unwrap();
        }
        // Open: the buffer becomes sends, queued; a subscriber told `open`
        // closes before the driver carries them out.
        p.handle_open(conn, 0);
        p.close();
        assert_eq!(drain(&mut p), closed_by_close(conn));
    }

    #[test]
    fn close_while_on_open_is_pending_ignores_its_late_outcome() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 0);
        p.handle_message(conn, Frame::Text("\"held\"".into()));
        drain(&mut p);
        p.close();
        assert_eq!(drain(&mut p), closed_by_close(conn));
        p.handle_on_open(conn, Ok(()), 1);
        assert!(drain(&mut p).is_empty());
        assert!(!p.is_ready());
    }

    #[test]
    fn close_while_waiting_cancels_the_reconnect() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.handle_close(conn, 1006, "", 0);
        p.close();
        assert_eq!(
            drain(&mut p),
            [Action::Stopped {
                reason: StopReason::Closed
            }]
        );
        assert_eq!(p.poll_timeout(), None);
        p.handle_timeout(10_000);
        assert!(drain(&mut p).is_empty());
    }

    #[test]
    fn sends_go_out_at_once_when_ready() {
        let (mut p, conn) = ready(WebSocketConfig::default(), 0);
        p.send("a".into()).unwrap();
        assert_eq!(
            drain(&mut p),
            [Action::Send {
                conn,
                text: "a".into()
            }]
        );
    }

    #[test]
    fn the_buffer_keeps_the_newest_100_and_flushes_them_in_order() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        for i in 0..150 {
            p.send(format!("m{i}")).unwrap();
        }
        assert!(drain(&mut p).is_empty());
        assert_eq!(p.buffered().count(), MAX_BUFFERED);
        p.handle_open(conn, 0);
        let sent: Vec<String> = drain(&mut p)
            .into_iter()
            .map(|a| match a {
                Action::Send { conn: c, text } if c == conn => text,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        let expected: Vec<String> = (50..150).map(|i| format!("m{i}")).collect();
        assert_eq!(sent, expected);
        assert_eq!(p.buffered().count(), 0);
    }

    /// The texts `send` buffered, in order.
    fn buffered(p: &WebSocketPolicy) -> Vec<&str> {
        p.buffered().collect()
    }

    #[test]
    fn the_bridges_manifest_and_changed_texts_are_read_as_registry_states() {
        use crate::protocol::{Changed, Manifest, PageToAgent, ProtocolV1};
        let id = "6578e036-ab02-4312-8377-ffc41173e041";
        let manifest = serde_json::to_string(&PageToAgent::Manifest(Manifest {
            protocol: ProtocolV1,
            client_id: id.into(),
            rev: 3,
            tools: Vec::new(),
        }))
        .unwrap();
        let changed = serde_json::to_string(&PageToAgent::Changed(Changed {
            protocol: ProtocolV1,
            client_id: id.into(),
            rev: 4,
        }))
        .unwrap();
        assert_eq!(
            registry_state(&manifest),
            Some((RegistryState::Manifest, id))
        );
        assert_eq!(registry_state(&changed), Some((RegistryState::Changed, id)));
        for other in [
            r#"{"type":"result","protocol":1,"clientId":"c","id":"1","result":{"status":"ok"}}"#,
            r#"{"protocol":1,"type":"manifest","clientId":"c","rev":1,"tools":[]}"#,
            r#"{"type":"manifest","protocol":1,"clientId":"c\"x","rev":1}"#,
            r#"{"type":"manifest","protocol":1,"clientId":"c"#,
            "",
        ] {
            assert_eq!(registry_state(other), None, "{other}");
        }
    }

    /// A page registering tools while offline sends a manifest per
    /// revision: only its latest is kept, so the results answered before
    /// stay buffered however many revisions follow.
    #[test]
    fn a_buffered_registry_state_is_superseded_by_the_pages_next_one() {
        let manifest = |page: &str, rev: u32| {
            format!(
                r#"{{"type":"manifest","protocol":1,"clientId":"{page}","rev":{rev},"tools":[]}}"#
            )
        };
        let changed = |page: &str, rev: u32| {
            format!(r#"{{"type":"changed","protocol":1,"clientId":"{page}","rev":{rev}}}"#)
        };
        let result =
            r#"{"type":"result","protocol":1,"clientId":"a","id":"1","result":{"status":"ok"}}"#;
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        p.send(manifest("a", 0)).unwrap();
        p.send(result.into()).unwrap();
        p.send(manifest("b", 0)).unwrap();
        for rev in 1..=150 {
            p.send(manifest("a", rev)).unwrap();
        }
        assert_eq!(
            buffered(&p),
            [
                result,
                manifest("b", 0).as_str(),
                manifest("a", 150).as_str()
            ]
        );
        // `changed` (onChange: 'changed'): the attach manifest is kept, the
        // latest `changed` after it; a manifest supersedes both.
        p.send(changed("b", 1)).unwrap();
        p.send(changed("b", 2)).unwrap();
        assert_eq!(
            buffered(&p),
            [
                result,
                manifest("b", 0).as_str(),
                manifest("a", 150).as_str(),
                changed("b", 2).as_str()
            ]
        );
        p.send(manifest("b", 3)).unwrap();
        assert_eq!(
            buffered(&p),
            [
                result,
                manifest("a", 150).as_str(),
                manifest("b", 3).as_str()
            ]
        );
        // Ready: sent as they come, nothing superseded.
        p.handle_open(conn, 0);
        drain(&mut p);
        p.send(manifest("a", 151)).unwrap();
        p.send(manifest("a", 152)).unwrap();
        assert_eq!(drain(&mut p).len(), 2);
    }

    #[test]
    fn sends_while_on_open_is_pending_are_buffered_and_survive_reconnects() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 0);
        drain(&mut p);
        p.send("during onOpen".into()).unwrap();
        assert!(drain(&mut p).is_empty());
        p.handle_close(conn, 1006, "", 1);
        let conn = fire(&mut p);
        p.send("while away".into()).unwrap();
        p.handle_open(conn, 600);
        p.handle_on_open(conn, Ok(()), 601);
        assert_eq!(
            drain(&mut p),
            [
                Action::CallOnOpen { conn },
                Action::Send {
                    conn,
                    text: "during onOpen".into()
                },
                Action::Send {
                    conn,
                    text: "while away".into()
                },
            ]
        );
    }

    #[test]
    fn inbound_is_held_while_on_open_is_pending_then_delivered_after_the_flush() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.send("out".into()).unwrap();
        p.handle_open(conn, 0);
        drain(&mut p);
        for i in 0..120 {
            assert_eq!(
                p.handle_message(conn, Frame::Text(format!("\"in{i}\""))),
                Inbound::Held
            );
        }
        p.handle_on_open(conn, Ok(()), 1);
        let actions = drain(&mut p);
        assert_eq!(
            actions.first(),
            Some(&Action::Send {
                conn,
                text: "out".into()
            })
        );
        let delivered: Vec<&str> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Deliver { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(delivered.len(), MAX_HELD);
        assert_eq!(delivered.first(), Some(&"\"in20\""));
        assert_eq!(delivered.last(), Some(&"\"in119\""));
        assert_eq!(actions.len(), 1 + MAX_HELD);
    }

    /// Frames held while `onOpen` is pending are bounded in bytes, not
    /// only in count: 100 frames of a megabyte each hold at most
    /// [`MAX_HELD_BYTES`], the newest kept in order, every one evicted
    /// counted; a frame longer than the bound alone is dropped without
    /// evicting anything, and the driver need not read it.
    #[test]
    fn held_inbound_is_bounded_in_bytes_and_the_overflow_is_counted() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 0);
        drain(&mut p);
        let frame = |i: usize| format!("[{i:3},\"{}\"]", "x".repeat(1_048_576 - 8));
        assert_eq!(frame(7).len(), 1_048_576);
        for i in 0..100 {
            assert_eq!(p.handle_message(conn, Frame::Text(frame(i))), Inbound::Held);
            let (count, bytes) = p.held();
            assert!(bytes <= MAX_HELD_BYTES, "{bytes} bytes held");
            assert_eq!(bytes, count * 1_048_576);
        }
        assert_eq!(p.held(), (4, MAX_HELD_BYTES));
        assert_eq!(p.held_dropped(), 96);
        // Alone over the bound: dropped, the held ones kept.
        let long = format!("\"{}\"", "é".repeat(MAX_HELD_BYTES / 2));
        assert!(long.len() > MAX_HELD_BYTES && utf16_len(&long) <= MAX_FRAME_UTF16_UNITS);
        assert_eq!(
            p.handle_message(conn, Frame::Text(long)),
            Inbound::Dropped(DropReason::TooLongToHold)
        );
        // One the driver can tell from its length alone is not even read.
        assert!(p.reads(conn, MAX_FRAME_UTF16_UNITS));
        assert!(!p.reads(conn, MAX_FRAME_UTF16_UNITS + 1));
        assert!(!p.reads(ConnId(99), 10), "a stale socket's frame");
        assert_eq!(
            p.handle_message(
                conn,
                Frame::Unread {
                    units: MAX_FRAME_UTF16_UNITS + 1,
                    bytes: None
                }
            ),
            Inbound::Dropped(DropReason::TooLong {
                units: MAX_FRAME_UTF16_UNITS + 1
            })
        );
        // Its UTF-8 length, measured by the driver outside wasm memory.
        assert!(p.holds(MAX_HELD_BYTES) && !p.holds(MAX_HELD_BYTES + 1));
        assert_eq!(
            p.handle_message(
                conn,
                Frame::Unread {
                    units: MAX_HELD_BYTES / 2,
                    bytes: Some(MAX_HELD_BYTES + 2)
                }
            ),
            Inbound::Dropped(DropReason::TooLongToHold)
        );
        assert_eq!(p.held(), (4, MAX_HELD_BYTES));
        assert_eq!(p.held_dropped(), 98);
        p.handle_on_open(conn, Ok(()), 1);
        let delivered: Vec<String> = drain(&mut p)
            .into_iter()
            .filter_map(|a| match a {
                Action::Deliver { text } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(delivered, [frame(96), frame(97), frame(98), frame(99)]);
        assert_eq!(p.held(), (0, 0));
        // Ready: any frame within the frame limit is read and delivered.
        assert!(p.reads(conn, MAX_FRAME_UTF16_UNITS));
        assert!(!p.reads(conn, MAX_FRAME_UTF16_UNITS + 1));
        assert!(p.holds(3 * MAX_FRAME_UTF16_UNITS));
        let long = format!("\"{}\"", "é".repeat(MAX_HELD_BYTES / 2));
        assert_eq!(
            p.handle_message(conn, Frame::Text(long)),
            Inbound::Delivered
        );
    }

    #[test]
    fn held_inbound_is_dropped_when_the_socket_closes_first() {
        let mut p = WebSocketPolicy::new(config(None, &[], true));
        let conn = connect_id(&drain(&mut p));
        p.handle_open(conn, 0);
        p.handle_message(conn, Frame::Text("\"held\"".into()));
        p.handle_close(conn, 1006, "", 1);
        let next = fire(&mut p);
        p.handle_on_open(conn, Ok(()), 2); // the old socket's onOpen: ignored
        p.handle_open(next, 600);
        p.handle_on_open(next, Ok(()), 601);
        assert_eq!(drain(&mut p), [Action::CallOnOpen { conn: next }]);
    }

    #[test]
    fn binary_and_oversized_frames_are_dropped() {
        // The spec's number: 4 × 1048576 UTF-16 code units.
        assert!(!exceeds_frame_limit_units(4_194_304));
        assert!(exceeds_frame_limit_units(4_194_305));
        let (mut p, conn) = ready(WebSocketConfig::default(), 0);
        assert_eq!(
            p.handle_message(conn, Frame::Binary),
            Inbound::Dropped(DropReason::Binary)
        );
        assert_eq!(
            p.handle_message(
                conn,
                Frame::TooLong {
                    units: MAX_FRAME_UTF16_UNITS + 1
                }
            ),
            Inbound::Dropped(DropReason::TooLong {
                units: MAX_FRAME_UTF16_UNITS + 1
            })
        );
        let at_limit = json_string("a", MAX_FRAME_UTF16_UNITS - 2);
        assert_eq!(
            p.handle_message(conn, Frame::Text(at_limit)),
            Inbound::Delivered
        );
        let over = "a".repeat(MAX_FRAME_UTF16_UNITS + 1);
        assert_eq!(
            p.handle_message(conn, Frame::Text(over)),
            Inbound::Dropped(DropReason::TooLong {
                units: MAX_FRAME_UTF16_UNITS + 1
            })
        );
        let delivered = drain(&mut p);
        assert_eq!(delivered.len(), 1);
    }

    #[test]
    fn the_limit_counts_utf16_units_not_bytes() {
        let (mut p, conn) = ready(WebSocketConfig::default(), 0);
        // 'é' is 2 UTF-8 bytes and 1 unit: 8 MB of bytes, at the limit.
        let wide = json_string("é", MAX_FRAME_UTF16_UNITS - 2);
        assert_eq!(
            p.handle_message(conn, Frame::Text(wide)),
            Inbound::Delivered
        );
        // '😀' is 4 bytes and 2 units: half the limit in characters, plus one.
        let astral = "😀".repeat(MAX_FRAME_UTF16_UNITS / 2) + "a";
        assert_eq!(
            p.handle_message(conn, Frame::Text(astral)),
            Inbound::Dropped(DropReason::TooLong {
                units: MAX_FRAME_UTF16_UNITS + 1
            })
        );
    }

    #[test]
    fn a_text_frame_is_delivered_unread() {
        // Whether it is JSON is its reader's question (the bridge drops one
        // that is not, silently): the policy reads no text.
        let (mut p, conn) = ready(WebSocketConfig::default(), 0);
        let deep = "[".repeat(200) + &"]".repeat(200);
        for text in [
            "",
            "held",
            "{\"protocol\": 1, not json",
            "[1,]",
            &deep,
            "{\"a\": 1}",
        ] {
            assert_eq!(
                p.handle_message(conn, Frame::Text(text.into())),
                Inbound::Delivered,
                "{text:?}"
            );
            assert_eq!(p.poll_action(), Some(Action::Deliver { text: text.into() }));
        }
    }

    #[test]
    fn utf16_len_matches_encode_utf16() {
        for text in [
            "",
            "a",
            "é",
            "€",
            "😀",
            "a😀é€\u{10FFFF}\u{7F}\u{80}\u{800}\u{FFFF}\u{10000}",
        ] {
            assert_eq!(utf16_len(text), text.encode_utf16().count(), "{text:?}");
        }
        assert_eq!(frame_units_over_limit("short"), None);
        assert!(!exceeds_frame_limit_units(MAX_FRAME_UTF16_UNITS));
        assert!(exceeds_frame_limit_units(MAX_FRAME_UTF16_UNITS + 1));
    }

    #[test]
    fn events_of_an_old_socket_are_ignored() {
        let (mut p, old) = ready(WebSocketConfig::default(), 0);
        p.handle_close(old, 1006, "", 10);
        let new = fire(&mut p);
        assert_eq!(
            p.handle_message(old, Frame::Text("{}".into())),
            Inbound::Dropped(DropReason::StaleConnection)
        );
        p.handle_open(old, 600);
        p.handle_close(old, 1006, "", 600);
        assert!(drain(&mut p).is_empty());
        assert_eq!(p.poll_timeout(), None);
        p.handle_open(new, 601);
        assert!(p.is_ready());
    }

    #[test]
    fn delivery_needs_a_ready_socket() {
        let mut p = WebSocketPolicy::new(WebSocketConfig::default());
        let conn = connect_id(&drain(&mut p));
        assert_eq!(
            p.handle_message(conn, Frame::Text("{}".into())),
            Inbound::Dropped(DropReason::StaleConnection)
        );
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn utf16_len_is_encode_utf16_count(text in any::<String>()) {
            prop_assert_eq!(utf16_len(&text), text.encode_utf16().count());
        }
    }
}
