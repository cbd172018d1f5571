//! Every input kept from fuzzing (`fuzz/seeds/<target>`, and crashes found
//! so far in `fuzz/regressions/<target>`) replayed through the same checks
//! as the fuzz target, so a fixed crash stays fixed.
// Native only: the kept inputs are files, and the transport check's oracle
// (the `url` crate) is a native dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod support {
    pub mod inbound_check;
    pub mod machine_drive;
    pub mod pattern_check;
    pub mod pattern_oracle;
    pub mod transport_check;
    pub mod validate_check;
}

use std::path::Path;

/// Replays every file of the target's kept directories; returns how many.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).unwrap_or_default();
            eprintln!("replaying {}", path.display());
            check(&data);
            count += 1;
        }
    }
    count
}

#[test]
fn kept_fuzz_inputs_replay_cleanly() {
    let count = replay("inbound", support::inbound_check::check_inbound);
    assert!(count >= 7, "expected the seed corpus, found {count} files");
}

#[test]
fn kept_machine_fuzz_inputs_replay_cleanly() {
    let count = replay("machine", support::machine_drive::drive_machine);
    assert!(
        count >= 5,
        "expected the machine seed corpus, found {count} files"
    );
}

#[test]
fn kept_transport_fuzz_inputs_replay_cleanly() {
    let count = replay("transport", support::transport_check::check_transport);
    assert!(
        count >= 6,
        "expected the transport seed corpus, found {count} files"
    );
}

#[test]
fn kept_pattern_fuzz_inputs_replay_cleanly() {
    let count = replay("pattern", support::pattern_check::check_pattern);
    assert!(
        count >= 4,
        "expected the pattern seed corpus, found {count} files"
    );
}

/// Without the time oracle: a debug build's times say nothing of the
/// shipped module's (the fuzz target runs with it, `docs/fuzzing.md`).
#[test]
fn kept_validate_fuzz_inputs_replay_cleanly() {
    let count = replay("validate", |data| {
        support::validate_check::check_validate(data, None)
    });
    assert!(
        count >= 10,
        "expected the validate seed corpus, found {count} files"
    );
}

/// The kept `validate` inputs under the time oracle, in an optimized build
/// without the fuzzer's instrumentation (which more than doubles the time
/// of comparisons): `cargo test --release --test fuzz_regressions --
/// --ignored`. Ignored by default: a time is no test on a shared machine.
#[test]
#[ignore]
fn kept_validate_fuzz_inputs_within_the_time_oracle() {
    let count = replay("validate", |data| {
        let limit = std::time::Duration::from_millis(100);
        support::validate_check::check_validate(data, Some(limit))
    });
    assert!(count >= 10, "found {count} files");
}
