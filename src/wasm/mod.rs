//! The boundary (wasm32 only): `#[wasm_bindgen]` classes and functions with
//! named methods, and the driver that calls the page's JS for the core.
//! Compiled only for `wasm32`; the JS in `js/` is the loader, the React
//! hook, the `ToolmarkError` class and the entry modules.
//!
//! - `registry`: `createToolmark` → `Toolmark`, `Scope`, `Events`;
//! - `bridge`: `bridge(...)`, the plugin `tm.use` attaches;
//! - `webmcp`: `webmcp(...)`, the plugin for WebMCP browser agents (a part
//!   of its own, attached through the registry's `PluginLink`);
//! - `driver`: the shared state, the output loop, tool runs, timers;
//! - `websocket`, `post_message`, `echo`: the transports' web-sys drivers
//!   over [`crate::transport`] (the in-page channel is JS:
//!   `js/src/bridge/in-page.js`);
//! - `forms`: `formTools`, the web-sys driver of [`crate::forms`];
//! - `paths`: the decisions of `getPath`, `setPath`, `flatten` (JS);
//! - `protocol`: `newId`, `llmName`; `validate`: `validateMessage` and the
//!   constants the build writes out (`protocolVersion`, `protocolSchemas`);
//! - `properties`: the page's `RegExp` enumerating `\p{…}` for `pattern`;
//! - `status`: a transport's connection state ↔ JS, `onStatus` subscribers;
//! - `values`: JS values ↔ the core's types; `error`: the one error
//!   channel; `host`: what is used of the JS host.
//!
//! # A call's payload across the boundary
//! An agent's `call` through a bridge, its input and the tool's result
//! (P = a parse of the payload, W = a write of it):
//! 1. the transport hands the message to the bridge: a WebSocket frame of
//!    this module's transport as the frame's own text (`bridge::text_route`),
//!    any other transport's object by `JSON.stringify` (W1; the spec's size
//!    limit is on that text); the text is copied into wasm memory;
//! 2. the core scans its depth and reads and checks the message without
//!    building a value (P1); the input is kept as its text
//!    (`protocol::JsonText`); a JSON Schema that asserts something builds
//!    the input's value from that text to validate it (charged to the
//!    validation's budget) and drops it;
//! 3. the `Run` action carries the input's text, and `JSON.parse` makes the
//!    value `run` gets (P2; none when a Standard Schema validated the
//!    input: its own value is passed on);
//! 4. the tool's value: `JSON.stringify` with the strict replacer (W2), the
//!    spec's semantics for results, whose JS half passes what JSON writes
//!    unchanged (`js/src/strict-json.js`); its text copied into wasm memory,
//!    a large one with room for the message around it;
//! 5. the core checks it (P3: serde_json's `IgnoredAny`, a scan that
//!    builds nothing) and keeps the text as the result's `data`: a `Value`
//!    would cost several times the text in memory, stop at 128 levels and
//!    refuse the lone surrogates `JSON.stringify` escapes (the dev-mode
//!    output check parses it);
//! 6. the core writes the `result` message (W3) around the data's text,
//!    in its own buffer when it has the room (a large result is held once);
//!    a page call's result is `JSON.parse`d from the data's text instead
//!    (no W3);
//! 7. `JSON.parse` makes the object `transport.send` gets (P4); a
//!    `websocketTransport` writes it as the frame's text again, the
//!    in-page channel hands it to the agent end as it is.
//!
//! Text, not values, crosses on this path: building JS objects from Rust
//! values field by field is slower than writing text and one `JSON.parse`
//! at every size measured (`values.rs`, `result`). Calls into JS per input
//! are one per `send` and per run, besides type tests and property reads.

// A module built without `toolmark` (a transport's or `formTools`' own) uses
// only part of the shared helpers.
#![cfg_attr(not(feature = "toolmark"), allow(dead_code, unused_imports))]

#[cfg(feature = "toolmark")]
mod bridge;
#[cfg(feature = "toolmark")]
mod driver;
#[cfg(feature = "echo")]
mod echo;
mod error;
#[cfg(feature = "forms")]
mod forms;
mod host;
#[cfg(feature = "paths")]
mod paths;
#[cfg(feature = "post-message")]
mod post_message;
#[cfg(feature = "toolmark")]
mod properties;
#[cfg(feature = "toolmark")]
mod protocol;
#[cfg(feature = "toolmark")]
mod registry;
mod status;
#[cfg(feature = "protocol")]
mod validate;
mod values;
#[cfg(feature = "webmcp")]
mod webmcp;
#[cfg(feature = "toolmark")]
mod websocket;

#[cfg(feature = "toolmark")]
pub use self::bridge::{bridge, Bridge};
#[cfg(feature = "forms")]
pub use self::forms::form_tools;
#[cfg(feature = "paths")]
pub use self::paths::{path_rules, path_segments};
#[cfg(feature = "toolmark")]
pub use self::properties::HostProperties;
#[cfg(feature = "toolmark")]
pub use self::protocol::*;
#[cfg(feature = "toolmark")]
pub use self::registry::{create_toolmark, Events, PluginLink, Scope, Toolmark};
#[cfg(feature = "protocol")]
pub use self::validate::*;
#[cfg(feature = "webmcp")]
pub use self::webmcp::{webmcp, WebMcp};
// The transports from Rust, for tests/wasm_transports.rs only: reachable
// from the crate's API they cost the shipped module 55 bytes gzip.
#[cfg(feature = "transport-tests")]
pub use self::{
    echo::{echo_transport, EchoTransport},
    post_message::{post_message_transport, PostMessageTransport},
    websocket::{websocket_transport, WebSocketTransport},
};
