//! The one host timer a driver keeps for a sans-IO machine's next deadline
//! (the bridge's [`crate::machine::Toolmark`], a WebSocket transport's
//! policy): whether the armed timer still serves, and the delay the host's
//! `setTimeout` is handed.

/// The longest delay `setTimeout` honours (2³¹ − 1 ms); a longer one fires
/// at once in browsers and Node, so a farther deadline is armed at this and
/// re-armed when it fires early.
pub const MAX_DELAY_MS: u64 = 2_147_483_647;

/// What a driver does with its timer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rearm {
    /// The armed timer fires at the deadline wanted (or none is armed and
    /// none is wanted): leave it.
    Keep,
    /// Clear the armed timer, if any, and arm one when `arm` says so.
    Replace {
        /// The deadline and the delay to it, or `None` for no timer.
        arm: Option<Arm>,
    },
}

/// A timer to arm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm {
    /// The machine's deadline (ms, the driver's clock): what the armed
    /// timer is compared with next time.
    pub deadline: u64,
    /// `setTimeout`'s delay: the time left, none when past, at most
    /// [`MAX_DELAY_MS`].
    pub delay_ms: f64,
}

/// The timer for `wanted` (the machine's next deadline) when the one armed
/// fires at `armed`, at `now`.
pub fn rearm(armed: Option<u64>, wanted: Option<u64>, now: u64) -> Rearm {
    if armed == wanted {
        return Rearm::Keep;
    }
    let arm = wanted.map(|deadline| Arm {
        deadline,
        delay_ms: delay_ms(deadline, now),
    });
    Rearm::Replace { arm }
}

/// `setTimeout`'s delay to `deadline` at `now`: none when past, at most
/// [`MAX_DELAY_MS`].
pub fn delay_ms(deadline: u64, now: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // at most 2^31 - 1: exact
    let delay = deadline.saturating_sub(now).min(MAX_DELAY_MS) as f64;
    delay
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_armed_for_the_deadline_wanted_is_kept() {
        assert_eq!(rearm(Some(1_500), Some(1_500), 1_000), Rearm::Keep);
        assert_eq!(rearm(None, None, 1_000), Rearm::Keep);
    }

    #[test]
    fn another_deadline_replaces_the_timer_with_the_time_left() {
        let arm = Some(Arm {
            deadline: 1_500,
            delay_ms: 500.0,
        });
        assert_eq!(
            rearm(Some(2_000), Some(1_500), 1_000),
            Rearm::Replace { arm }
        );
        assert_eq!(rearm(None, Some(1_500), 1_000), Rearm::Replace { arm });
    }

    #[test]
    fn no_deadline_clears_the_timer() {
        assert_eq!(
            rearm(Some(1_500), None, 1_000),
            Rearm::Replace { arm: None }
        );
    }

    #[test]
    fn a_deadline_already_past_fires_at_once() {
        let arm = Some(Arm {
            deadline: 900,
            delay_ms: 0.0,
        });
        assert_eq!(rearm(None, Some(900), 1_000), Rearm::Replace { arm });
    }

    #[test]
    fn a_far_deadline_is_armed_at_the_longest_delay_the_host_honours() {
        let far = 1_000 + MAX_DELAY_MS + 1;
        let arm = Some(Arm {
            deadline: far,
            delay_ms: 2_147_483_647.0,
        });
        assert_eq!(rearm(None, Some(far), 1_000), Rearm::Replace { arm });
        assert_eq!(
            rearm(None, Some(u64::MAX), 0),
            Rearm::Replace {
                arm: Some(Arm {
                    deadline: u64::MAX,
                    delay_ms: 2_147_483_647.0
                })
            }
        );
    }
}
