//! The checks the `pattern` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use super::pattern_oracle::{self, Branch, Need};
use toolmark_bridge::schema::pattern::LinearPatterns;
use toolmark_bridge::schema::PatternMatcher;

/// The input is a pattern, a NUL byte and a text (lossy UTF-8). Nothing may
/// panic; a short translated pattern without counted repetition (so within
/// regex-lite's size and nesting limits) must compile in the oracle;
/// `LinearPatterns` answers as the oracle (`regex-lite` over the same
/// translation and plans) does, refusals with the same message, and the
/// line-wise lookahead form as its definition says (some position where
/// every `.*X` matches).
pub fn check_pattern(data: &[u8]) {
    let (pattern, text) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let pattern = String::from_utf8_lossy(pattern);
    let text = String::from_utf8_lossy(text);
    let small = pattern.len() <= 64 && !pattern.contains('{');
    if let Some(translated) = pattern_oracle::linear_syntax(&pattern) {
        if small {
            assert!(
                pattern_oracle::linear_regex(&pattern).is_some(),
                "{pattern:?} translates to {translated:?}, which regex-lite rejects"
            );
        }
    }
    let answer = LinearPatterns::new().is_match(&pattern, &text);
    assert_eq!(
        answer,
        pattern_oracle::is_match(&pattern, &text),
        "{pattern:?} {text:?}"
    );
    if small && pattern_oracle::plan(&pattern).is_ok() {
        assert!(answer.is_ok(), "{pattern:?}: {answer:?}");
    }
    if let (Ok([Branch::SomeLine(needs)]), Ok(matched)) =
        (pattern_oracle::plan(&pattern).as_deref(), &answer)
    {
        if text.len() <= 256 {
            assert_eq!(
                *matched,
                some_position(needs, &text),
                "{pattern:?} {text:?}"
            );
        }
    }
}

/// Whether some position of `text` starts a match of every `.*X`: the
/// leftmost match from there starts there.
fn some_position(needs: &[Need], text: &str) -> bool {
    let bodies: Vec<regex_lite::Regex> = needs
        .iter()
        .map(|need| &need.syntax)
        .filter_map(|x| {
            regex_lite::Regex::new(&format!("[^\\n\\r\\x{{2028}}\\x{{2029}}]*(?:{x})")).ok()
        })
        .collect();
    assert_eq!(bodies.len(), needs.len(), "{needs:?}");
    (0..=text.len())
        .filter(|&p| text.is_char_boundary(p))
        .any(|p| {
            bodies
                .iter()
                .all(|b| b.find_at(text, p).map(|m| m.start()) == Some(p))
        })
}
