//! The checks the `pattern` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use toolmark_bridge::schema::pattern::{
    linear_regex, linear_syntax, plan, Branch, LinearPatterns, Need,
};
use toolmark_bridge::schema::PatternMatcher;

/// The input is a pattern, a NUL byte and a text (lossy UTF-8). Nothing may
/// panic; a short translated pattern without counted repetition (so within
/// regex-lite's size and nesting limits) must compile; `LinearPatterns`
/// answers exactly when [`plan`] has a plan, a plain translation as its
/// regex does, and the line-wise lookahead form as its definition says
/// (some position where every `.*X` matches).
pub fn check_pattern(data: &[u8]) {
    let (pattern, text) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let pattern = String::from_utf8_lossy(pattern);
    let text = String::from_utf8_lossy(text);
    let translated = linear_syntax(&pattern);
    let regex = linear_regex(&pattern);
    let small = pattern.len() <= 64 && !pattern.contains('{');
    if let Some(translated) = &translated {
        if small {
            assert!(
                regex.is_some(),
                "{pattern:?} translates to {translated:?}, which regex-lite rejects"
            );
        }
    }
    let answer = LinearPatterns::new().is_match(&pattern, &text);
    let planned = plan(&pattern);
    match (&planned, &regex) {
        (_, Some(regex)) => assert_eq!(answer, Ok(regex.is_match(&text)), "{pattern:?}"),
        (Err(why), None) => assert_eq!(answer, Err(why.clone()), "{pattern:?}"),
        (Ok(_), None) if translated.is_some() => assert!(answer.is_err(), "{pattern:?}"),
        (Ok(branches), None) => {
            if small {
                assert!(answer.is_ok(), "{pattern:?}: {answer:?}");
            }
            if let ([Branch::SomeLine(needs)], Ok(matched)) = (branches.as_slice(), &answer) {
                if text.len() <= 256 {
                    assert_eq!(
                        *matched,
                        some_position(needs, &text),
                        "{pattern:?} {text:?}"
                    );
                }
            }
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
