//! The checks the `pattern` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use toolmark_bridge::schema::pattern::{linear_regex, linear_syntax, LinearPatterns};
use toolmark_bridge::schema::PatternMatcher;

/// Answers every pattern it is handed with an error, so a check can tell
/// which patterns left regex-lite.
struct NoFallback;

impl PatternMatcher for NoFallback {
    fn is_match(&self, _pattern: &str, _text: &str) -> Result<bool, String> {
        Err("fallback".into())
    }
}

/// The input is a pattern, a NUL byte and a text (lossy UTF-8). Nothing may
/// panic; a short translated pattern without counted repetition (so within
/// regex-lite's size and nesting limits) must compile, and
/// `LinearPatterns` answers from regex-lite exactly when it compiles.
pub fn check_pattern(data: &[u8]) {
    let (pattern, text) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let pattern = String::from_utf8_lossy(pattern);
    let text = String::from_utf8_lossy(text);
    let translated = linear_syntax(&pattern);
    let regex = linear_regex(&pattern);
    if let Some(translated) = &translated {
        if pattern.len() <= 64 && !pattern.contains('{') {
            assert!(
                regex.is_some(),
                "{pattern:?} translates to {translated:?}, which regex-lite rejects"
            );
        }
    }
    let answer = LinearPatterns::new(Box::new(NoFallback)).is_match(&pattern, &text);
    match regex {
        Some(regex) => assert_eq!(answer, Ok(regex.is_match(&text)), "{pattern:?}"),
        None => assert!(answer.is_err(), "{pattern:?}"),
    }
}
