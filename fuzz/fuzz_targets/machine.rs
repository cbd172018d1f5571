//! Drives the sans-IO core with a program decoded from the input: registry
//! changes, bridges, inbound text, page calls, answers to its work (also
//! stale and unknown ones) and clock moves. It must never panic, and what it
//! sends and hands out must keep the protocol's invariants, as checked by
//! the model of the spec's rules it shares with the proptest (see
//! `tests/support/machine_drive.rs` and `tests/support/spec_model.rs`).
#![no_main]

#[path = "../../tests/support/machine_drive.rs"]
mod machine_drive;

libfuzzer_sys::fuzz_target!(|data: &[u8]| machine_drive::drive_machine(data));
