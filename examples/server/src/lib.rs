//! The server half of the Toolmark bridge protocol v1, for the demo.
//!
//! - [`server`]: the HTTP and WebSocket endpoints (README.md lists them);
//!   [`echo`]: the Echo mode's channel authorization and publishing.
//! - [`hub`]: relays the agent's calls to the page and the page's answers
//!   back, with the Security MUSTs checked on every inbound message.
//! - [`store`]: bindings and session state behind [`store::SessionStore`].
//! - [`llm`]: `page_call` / `page_describe`, the rendered manifest, wrapping.
//! - [`agent`]: the [`agent::Agent`] trait and the offline scripted agent;
//!   [`model`]: a real model through the same trait, when configured.

pub mod agent;
pub mod auth;
pub mod echo;
pub mod hub;
pub mod llm;
pub mod model;
pub mod protocol;
pub mod server;
pub mod store;
