//! Every input kept from fuzzing (`fuzz/seeds/inbound`, and crashes found so
//! far in `fuzz/regressions/inbound`) replayed through the same checks as
//! the fuzz target, so a fixed crash stays fixed.

mod support {
    pub mod inbound_check;
}

use std::path::Path;

#[test]
fn kept_fuzz_inputs_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["seeds/inbound", "regressions/inbound"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).unwrap_or_default();
            support::inbound_check::check_inbound(&data);
            count += 1;
        }
    }
    assert!(count >= 7, "expected the seed corpus, found {count} files");
}
