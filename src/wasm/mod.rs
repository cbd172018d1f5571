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
//! A call's payload crosses as JSON text, not as values: docs/benchmarks.md,
//! "A call's payload across the boundary".

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
