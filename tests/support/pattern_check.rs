//! The checks the `pattern` fuzz target makes on one input, shared with
//! `tests/fuzz_regressions.rs` so kept inputs replay exactly as fuzzed.

use super::pattern_oracle::{self, Branch, Need};
use toolmark_bridge::schema::pattern::{LinearPatterns, PropertyRanges};
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
    check_properties(&pattern, &text);
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

/// A few properties of fixed ranges (any order, one overlapping), as a
/// host's `RegExp` might list them.
struct FixedProperties;

impl PropertyRanges for FixedProperties {
    fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>> {
        Some(match property {
            "L" => vec![(0x61, 0x7A), (0x41, 0x5A), (0xC0, 0x24F), (0x370, 0x3FF)],
            "Nd" => vec![(0x30, 0x39), (0x660, 0x669), (0x1D7CE, 0x1D7FF)],
            "Greek" => vec![(0x370, 0x3FF), (0x1F00, 0x1FFF), (0x3A0, 0x3B0)],
            "Empty" => vec![],
            _ => return None,
        })
    }
}

/// `\p{…}` means the class of its ranges: where the pattern is taken with
/// the properties, the same pattern with each `\p{X}` written out as its
/// ranges (`[\u{61}-\u{7a}…]`, or the ranges alone inside a class) is
/// taken too, and answers alike. Nothing may panic either way.
fn check_properties(pattern: &str, text: &str) {
    let with = LinearPatterns::with_properties(Box::new(FixedProperties)).is_match(pattern, text);
    if !pattern.contains("\\p{") && !pattern.contains("\\P{") {
        return;
    }
    let (Ok(matched), Some(spelled)) = (with, spelled_out(pattern)) else {
        return;
    };
    assert_eq!(
        LinearPatterns::new().is_match(&spelled, text),
        Ok(matched),
        "{pattern:?} as {spelled:?} on {text:?}"
    );
}

/// `pattern` with each `\p{X}` of [`FixedProperties`] written as its
/// ranges; `None` when some `\p{…}` is not one of them (or is empty).
fn spelled_out(pattern: &str) -> Option<String> {
    let mut out = String::new();
    let mut in_class = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let e = chars.next()?;
                if e != 'p' && e != 'P' {
                    out.push(c);
                    out.push(e);
                    continue;
                }
                let rest = chars.as_str();
                let name = rest.strip_prefix('{')?.split('}').next()?;
                chars = rest.get(name.len() + 2..)?.chars();
                let ranges = FixedProperties.ranges(name).filter(|r| !r.is_empty())?;
                let items: String = ranges
                    .iter()
                    .map(|(low, high)| format!("\\u{{{low:x}}}-\\u{{{high:x}}}"))
                    .collect();
                match (e, in_class) {
                    ('p', true) => out.push_str(&items),
                    ('p', false) => out.push_str(&format!("[{items}]")),
                    ('P', false) => out.push_str(&format!("[^{items}]")),
                    // A complement inside a class has no spelling as ranges here.
                    _ => return None,
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Some(out)
}
