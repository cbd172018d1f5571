//! Toolmark bridge, page side: a sans-IO core.
//!
//! The core takes inbound text, tool outcomes and the current time as
//! arguments and hands back outbound messages; it does no IO and reads no
//! clock and no global randomness. The `wasm` module (only on `wasm32`) is a
//! thin glue layer over it.
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

#[cfg(target_arch = "wasm32")]
pub mod wasm;
