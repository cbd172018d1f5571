//! SplitMix64: the one deterministic random source of the native tests, the
//! proptest model and the `machine` fuzz target's driver.
#![allow(dead_code)]

use toolmark_bridge::ids::{RandomError, RandomSource};

/// Seeded; with `fail_every` set, every n-th fill after the first (the
/// page's `clientId`) fails, to reach the paths where an id cannot be
/// minted.
pub struct SeededRandom {
    state: u64,
    fills: u64,
    fail_every: Option<u64>,
}

impl SeededRandom {
    pub fn new(seed: u64) -> SeededRandom {
        SeededRandom::failing_every(seed, None)
    }

    pub fn failing_every(seed: u64, fail_every: Option<u64>) -> SeededRandom {
        SeededRandom {
            state: seed,
            fills: 0,
            fail_every,
        }
    }
}

impl RandomSource for SeededRandom {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
        self.fills += 1;
        if let Some(n) = self.fail_every {
            if self.fills > 1 && self.fills % n == 0 {
                return Err(RandomError("seeded failure".into()));
            }
        }
        for chunk in buf.chunks_mut(8) {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            for (b, v) in chunk.iter_mut().zip(z.to_le_bytes()) {
                *b = v;
            }
        }
        Ok(())
    }
}
