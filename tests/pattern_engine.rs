//! `schema::pattern`'s engine against its oracle (`regex-lite` over the
//! same ECMA-262 translation and lookahead plans,
//! tests/support/pattern_oracle.rs): the same answers, the same refusals
//! with the same messages, and the same size and nesting limits, on seeded
//! random patterns and at the limits' edges; and `\p{…}` in every form
//! against the `regex` crate's Unicode tables, code point by code point.
// Native only: the oracle is a native dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

mod support {
    pub mod pattern_check;
    pub mod pattern_oracle;
    pub mod regex_properties;
}

use support::{pattern_oracle, regex_properties};
use toolmark_bridge::schema::pattern::{LinearPatterns, PropertyRanges};
use toolmark_bridge::schema::PatternMatcher;

/// xorshift32: `next(n)` picks a number below `n`, the same on every run.
fn picker(seed: u32) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize % n
    }
}

const PIECES: &[&str] = &[
    "a",
    "b",
    "é",
    "🐲",
    "-",
    " ",
    ".",
    "^",
    "$",
    "|",
    "(",
    ")",
    "(?:",
    "[",
    "]",
    "[^",
    "{",
    "}",
    "*",
    "+",
    "?",
    "{2}",
    "{1,}",
    "{0,2}",
    "{2,1}",
    "*?",
    "+?",
    "??",
    "{0}",
    "{1}",
    "{0,1}",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "\\b",
    "\\B",
    "\\n",
    "\\r",
    "\\t",
    "\\v",
    "\\0",
    "\\cJ",
    "\\x41",
    "\\u00e9",
    "\\u{1F432}",
    "\\uD83D\\uDC32",
    "\\uD83D",
    "\\-",
    "\\.",
    "\\/",
    "\\\\",
    "\\a",
    "\\1",
    "\\p{L}",
    "(?=a)",
    "\\u2028",
    "\\u00a0",
    "\\ufeff",
    "[a-c]",
    "[\\s\\d]",
    "[^\\W]",
    "[\\b]",
    "[.-]",
    "[z-a]",
    "[\\d-z]",
    "[]",
    "[^\\s\\S]",
    "[\\uD7FF\\uE000]",
    "&&",
    "(?<n>",
    "(?<m>a)",
    "\\k<n>",
    "(?=.*\\d)",
    "(?=.*[A-Z])",
    "(?!.*\\s)",
    "(?=.*[^a-z])",
    "(?=.*\\W)",
    "^(?=.*a)",
    "^(?!b)",
    "(?=.*a.)",
    ".*",
    "(?=.*a\\b)",
    "(?=.*(?:ab|c))",
];

const CHARS: &[char] = &[
    'a', 'b', 'c', 'A', 'Z', '1', '_', '-', ' ', '\t', '\n', '\r', '\u{0B}', '\u{A0}', '\u{2028}',
    '\u{2029}', '\u{FEFF}', 'é', '🐲', '\u{08}', '.', '/', '&', '!', '\0', '\u{D7FF}', '\u{E000}',
];

fn agree(pattern: &str, text: &str) {
    assert_eq!(
        LinearPatterns::new().is_match(pattern, text),
        pattern_oracle::is_match(pattern, text),
        "{pattern:?} on {text:?}"
    );
}

#[test]
fn random_patterns_answer_as_the_oracle() {
    let mut next = picker(0x5eed_1e55);
    let mut answers = [0usize; 3];
    for _ in 0..6000 {
        let pattern: String = (0..1 + next(6))
            .map(|_| PIECES[next(PIECES.len())])
            .collect();
        let m = LinearPatterns::new();
        for _ in 0..10 {
            let text: String = (0..next(9)).map(|_| CHARS[next(CHARS.len())]).collect();
            let got = m.is_match(&pattern, &text);
            assert_eq!(
                got,
                pattern_oracle::is_match(&pattern, &text),
                "{pattern:?} on {text:?}"
            );
            answers[match got {
                Ok(false) => 0,
                Ok(true) => 1,
                Err(_) => 2,
            }] += 1;
        }
    }
    assert!(answers.iter().all(|&n| n > 3000), "{answers:?}");
}

/// The fuzz target's checks on the same kind of input.
#[test]
fn random_inputs_pass_the_fuzz_checks() {
    let mut next = picker(0x0f0f_1234);
    for _ in 0..3000 {
        let pattern: String = (0..1 + next(5))
            .map(|_| PIECES[next(PIECES.len())])
            .collect();
        let text: String = (0..next(12)).map(|_| CHARS[next(CHARS.len())]).collect();
        support::pattern_check::check_pattern(format!("{pattern}\0{text}").as_bytes());
    }
}

/// The size limit where it falls, for several kinds of state, and the
/// nesting limits: accepted and refused exactly where the oracle is.
#[test]
fn the_limits_fall_where_the_oracles_do() {
    let accepted = |pattern: &str| pattern_oracle::is_match(pattern, "").is_ok();
    for (make, low, high) in [
        (
            (|n: u32| format!("a{{{n}}}")) as fn(u32) -> String,
            1,
            1 << 20,
        ),
        (|n| format!("[a-z]{{{n}}}"), 1, 1 << 20),
        (|n| format!("\\W{{0,{n}}}"), 1, 1 << 20),
        (|n| format!("(?:a|b|){{{n},}}"), 1, 1 << 20),
        (|n| format!("(?:a+)*b{{{n}}}"), 1, 1 << 20),
        // A star's loop takes more states when its body can match empty.
        (|n| format!("(?:a*b){{{n}}}"), 1, 1 << 20),
        (|n| format!("(?:(?:a|)*b){{{n}}}"), 1, 1 << 20),
        (|n| format!("(?:(?:a*)*b){{{n}}}"), 1, 1 << 20),
        (|n| format!("^(?=.*\\d)(?:.?){{{n}}}"), 1, 1 << 20),
        (|n| format!("(?=.*(?:a|b){{{n}}})(?=.*c)"), 1, 1 << 20),
    ] {
        // The largest count the oracle takes, by bisection.
        let (mut low, mut high) = (low, high);
        assert!(
            accepted(&make(low)) && !accepted(&make(high)),
            "{}",
            make(low)
        );
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if accepted(&make(mid)) {
                low = mid;
            } else {
                high = mid;
            }
        }
        for n in [low, high] {
            agree(&make(n), "ab1");
        }
    }
    for depth in [49, 50, 51] {
        let open = "(".repeat(depth);
        let close = ")".repeat(depth);
        for pattern in [
            format!("{open}a{close}"),
            format!("^(?={open}a{close})"),
            format!("{}c{close}", "(?:a|b".repeat(depth)),
            format!("{}c{close}", "(?:a|".repeat(depth)),
            format!("{}c{close}", "(?:ab*".repeat(depth)),
            format!("{}c{close}", "(?:a".repeat(depth)),
            format!(
                "{}c{}",
                "(?:(?:a)+".repeat(depth / 2),
                ")".repeat(depth / 2)
            ),
        ] {
            agree(&pattern, "abc");
            agree(&pattern, "");
        }
    }
}

/// Not a check: the engine's time per match against the oracle's compiled
/// regex, on long texts and on 100k short keys (`cargo test --release
/// --test pattern_engine -- --ignored --nocapture`; docs/benchmarks.md).
#[test]
#[ignore]
fn time_per_match_against_the_oracle() {
    use std::time::Instant;
    let a = "a".repeat(100_000);
    let words = "lorem ipsum dolor sit amet 12345 ".repeat(3000);
    let keys: Vec<String> = (0..100_000).map(|i| format!("key_{i}")).collect();
    let long = |text: &str| vec![text.to_owned(); 20];
    for (pattern, texts) in [
        ("^(a+)+$", long(&format!("{a}!"))),
        ("^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$", long(&a)),
        ("\\d{4}-\\d{2}-\\d{2}", long(&words)),
        ("(?:\\w+\\s?)+z", long(&words)),
        ("\\bsit\\b.*x", long(&words)),
        ("^k", keys.clone()),
        ("[1-9]$", keys.clone()),
        ("^[a-z_]+\\d*$", keys.clone()),
    ] {
        let engine = LinearPatterns::new();
        let Some(regex) = pattern_oracle::linear_regex(pattern) else {
            panic!("{pattern}")
        };
        let _ = engine.is_match(pattern, "");
        let time = |run: &dyn Fn(&str) -> bool| {
            let start = Instant::now();
            let matched = texts.iter().filter(|text| run(text)).count();
            (start.elapsed().as_nanos() / texts.len() as u128, matched)
        };
        let (new, a) = time(&|text| engine.is_match(pattern, text) == Ok(true));
        let (old, b) = time(&|text| regex.is_match(text));
        assert_eq!(a, b, "{pattern}");
        println!(
            "{pattern} | {} × {} bytes | {new} ns | {old} ns | {:.2}",
            texts.len(),
            texts.first().map_or(0, String::len),
            new as f64 / old as f64
        );
    }
}

/// A match is charged by the states its program visits per byte: a
/// counted repetition's expansion ends in the budget's issue before the
/// search, where charging the pattern's bytes let it run for seconds.
#[test]
fn counted_repetition_is_charged_by_its_program() {
    use serde_json::json;
    use toolmark_bridge::schema::CompiledSchema;
    let m = LinearPatterns::new();
    assert_eq!(m.work_per_byte("^(a+)+$"), 9);
    // No state reads a character, and 300,000 are visited at each one.
    assert!(m.work_per_byte("(?:(?:)?){100000}") > 300_000);
    assert!(m.work_per_byte("a{40000}b") > 40_000);
    assert!(m.work_per_byte("^(?=.*\\d)x{500}") > 500);
    assert_eq!(m.work_per_byte("(?<=a)b"), 0);
    let Ok(schema) = CompiledSchema::compile(&json!({ "type": "string", "pattern": "a{40000}b" }))
    else {
        panic!("schema")
    };
    let issues = schema.validate(&json!("a".repeat(40_000)), &m);
    assert!(
        issues.iter().any(|i| i.message.contains("exceeded")),
        "{issues:?}"
    );
    let Ok(small) = CompiledSchema::compile(&json!({ "type": "string", "pattern": "^a{3,5}b$" }))
    else {
        panic!("schema")
    };
    assert!(small.is_valid(&json!("aaaab"), &m));
    assert!(!small.is_valid(&json!("ab"), &m));
}

/// The `regex` crate's tables as the host (natively, no `RegExp`).
struct RegexProperties;

impl PropertyRanges for RegexProperties {
    fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>> {
        regex_properties::property_ranges(property)
    }
}

/// The forms ECMA-262 has (General_Category values and aliases,
/// `gc=`, `Script=`, `sc=`, `Script_Extensions=`, `scx=`, binary
/// properties), as `\p`, `\P`, in classes and negated classes, on
/// the boundaries of every range and a spread of other code points.
#[test]
fn property_escapes_match_their_code_points() {
    let m = LinearPatterns::with_properties(Box::new(RegexProperties));
    for property in [
        "L",
        "Letter",
        "Lu",
        "Nd",
        "digit",
        "gc=L",
        "General_Category=Letter",
        "Script=Greek",
        "sc=Latin",
        "Script_Extensions=Greek",
        "scx=Deva",
        "Alphabetic",
        "White_Space",
        "Emoji",
        "ASCII",
        "Any",
        "Assigned",
    ] {
        let ranges =
            regex_properties::property_ranges(property).unwrap_or_else(|| panic!("{property}"));
        let inside = |c: u32| ranges.iter().any(|&(low, high)| low <= c && c <= high);
        let mut points: Vec<u32> = (0..0x11_0000).step_by(97).collect();
        for &(low, high) in &ranges {
            points.extend([low.saturating_sub(1), low, high, high + 1]);
        }
        let points: Vec<char> = points.into_iter().filter_map(char::from_u32).collect();
        let forms = [
            (format!("^\\p{{{property}}}$"), true),
            (format!("^\\P{{{property}}}$"), false),
            (format!("^[\\p{{{property}}}]$"), true),
            (format!("^[^\\p{{{property}}}]$"), false),
            (format!("^[^\\P{{{property}}}]$"), true),
            (format!("^[\\P{{{property}}}\\p{{{property}}}]$"), true),
        ];
        for (i, (pattern, want)) in forms.iter().enumerate() {
            for &c in &points {
                let mut text = [0; 4];
                let expected = match i {
                    5 => true,
                    _ => inside(u32::from(c)) == *want,
                };
                assert_eq!(
                    m.is_match(pattern, c.encode_utf8(&mut text)),
                    Ok(expected),
                    "{pattern} {c:?}"
                );
            }
        }
    }
    // With other class items, quantified, in both lookahead forms.
    assert_eq!(m.is_match("^[^\\P{Any}]$", "🐲"), Ok(true));
    assert_eq!(m.is_match("[\\P{Any}]", "a"), Ok(false));
    assert_eq!(m.is_match("^[\\p{L}\\d_]+$", "Élan_2"), Ok(true));
    assert_eq!(m.is_match("^[\\p{L}\\d_]+$", "Élan-2"), Ok(false));
    assert_eq!(m.is_match("^\\p{Lu}\\p{Ll}*$", "Ωmega"), Ok(true));
    assert_eq!(m.is_match("^\\p{sc=Greek}{2,3}$", "αβγδ"), Ok(false));
    let password = "^(?=.*\\p{Lu})(?=.*\\p{Nd})(?!.*\\p{White_Space}).{8,}$";
    assert_eq!(m.is_match(password, "Éclair٣ok"), Ok(true));
    assert_eq!(m.is_match(password, "éclair٣ok"), Ok(false));
    assert_eq!(m.is_match(password, "Éclair٣ ok"), Ok(false));
    assert_eq!(m.is_match("(?=.*\\p{Lu})(?=.*\\P{L})", "a\nB1"), Ok(true));
    assert_eq!(m.is_match("(?=.*\\p{Lu})(?=.*\\P{L})", "a1\nB"), Ok(false));
}
