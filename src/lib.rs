//! Toolmark bridge, page side: a sans-IO core.
//!
//! The core takes inbound text, tool outcomes and the current time as
//! arguments and hands back outbound messages; it does no IO and reads no
//! clock and no global randomness. The `wasm` module (only on `wasm32`) is a
//! thin glue layer over it.
//!
//! The state machine is [`machine::Toolmark`]: `handle_*` (and registry and
//! page-request methods) in, `poll_*` out. After any input, drain in this
//! order, each until `None`: [`machine::Toolmark::poll_transmit`] (messages,
//! in send order), [`machine::Toolmark::poll_event`] (error events,
//! completions, pending-list changes), [`machine::Toolmark::poll_action`]
//! (work for JS: runs to start or abort, validations, summaries, restorers,
//! transports to close), then [`machine::Toolmark::poll_timeout`] (the next
//! deadline for [`machine::Toolmark::handle_timeout`]).
// Hostile input must never panic inside WebAssembly: a trap kills the bridge.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo
    )
)]
pub mod confirmations;
pub mod ids;
pub mod machine;
pub mod policy;
pub mod protocol;
pub mod registry;
pub mod scheduling;
pub mod schema;
pub mod vecmap;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
