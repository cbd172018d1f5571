//! Toolmark bridge, page side: a sans-IO core.
//!
//! The core takes inbound text, tool outcomes and the current time as
//! arguments and hands back outbound messages; it does no IO and reads no
//! clock and no global randomness. The `wasm` module (only on `wasm32`) is a
//! thin glue layer over it.
//!
//! The state machine is [`machine::Toolmark`]: `handle_*` (and registry and
//! page-request methods) in, one `poll_output` out, called after every input
//! until it returns the next deadline; it hands the outputs out in one
//! order. The [`machine`] module docs state that contract and the drain
//! order, and name the module that owns each concern: [`bridges`],
//! [`lifecycle`] (calls, lanes, confirmations, undo), [`registry`],
//! [`policy`], [`outputs`].
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
// The sans-IO core is `core` and `alloc` only (`--no-default-features`
// builds it alone, with the panic handler below on wasm32). The default
// feature `std` links std: native use, the tests, and the shipped module,
// whose boundary (`wasm`) converts values with serde-wasm-bindgen.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// What std's prelude would bring, for every module.
mod prelude {
    pub use alloc::borrow::ToOwned;
    pub use alloc::boxed::Box;
    pub use alloc::format;
    pub use alloc::string::{String, ToString};
    pub use alloc::vec;
    pub use alloc::vec::Vec;
}

pub mod bridges;
pub mod forms;
pub mod given;
pub mod ids;
pub mod input;
pub mod json_value;
pub mod lanes;
pub mod lifecycle;
pub mod machine;
pub mod outputs;
pub mod paths;
pub mod policy;
pub mod protocol;
pub mod registry;
pub mod schema;
pub mod timer;
pub mod transport;
pub mod vecmap;
pub mod webmcp;

#[cfg(all(target_arch = "wasm32", feature = "std"))]
pub mod wasm;

/// Without std (the core alone on wasm32), a panic traps, as `panic = "abort"`
/// does with std: the crate denies panicking code, so this is only reached
/// by a bug or by running out of memory.
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// talc's allocator for single-threaded WebAssembly: a free block of the
/// size wanted is found through size bins, not by walking every free block,
/// so a fragmented heap does not make each allocation slower (a free list
/// walked per allocation made one agent call with 1 MiB of objects take 55 s
/// once 4,000 tools had come and gone: docs/benchmarks.md).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
compile_error!("the allocator assumes one thread (wasm32 without atomics)");
