//! `json::parse` against serde_json (with `float_roundtrip`, after
//! the old lone-surrogate pre-pass): a corpus of tricky texts, then random
//! ones. Any difference in value, key order, number kind, float bits or
//! error text fails. And `json::to_text` against serde_json's writer: the
//! same value back, the same bytes where no float is involved.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/json_check.rs"]
mod json_check;

use json_check::{check_json, check_text, check_written, has_float, oracle};
use proptest::prelude::*;
use toolmark_bridge::json::{parse, to_text, Value, NESTING_LIMIT};

const CORPUS: &[&str] = &[
    // plain values and whitespace
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "\"\"",
    "[]",
    "{}",
    " \t\r\n[ ]\n ",
    "[1,2,3]",
    "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
    "{\"z\":1,\"a\":2,\"m\":3}",
    "{\"a\":1,\"b\":2,\"a\":3}",
    "{\"a\":{\"x\":1},\"a\":[]}",
    "{\"\":0}",
    "[[[[]]]]",
    "[{},{},[]]",
    // not JSON
    "",
    " ",
    "\n\n  ",
    "nul",
    "nulx",
    "tru",
    "truE",
    "fals",
    "NaN",
    "Infinity",
    "-Infinity",
    "undefined",
    "'a'",
    "[1,]",
    "[,1]",
    "[1 2]",
    "[1,,2]",
    "{,}",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{\"a\":}",
    "{a:1}",
    "{1:1}",
    "{\"a\":1 \"b\":2}",
    "{\"a\":1]",
    "[1}",
    "[",
    "{",
    "[1,",
    "{\"a\"",
    "{\"a\":",
    "{\"a\":1,",
    "]",
    "}",
    ":",
    ",",
    "1 2",
    "[] []",
    "{}x",
    "\"a\"\"b\"",
    "/* c */ 1",
    "1 // c",
    "\u{feff}1",
    "[\n1,\n2,\n]",
    "{\n\"a\"\n:\n}\n",
    "\n\n\nx",
    "[1]\n\n ]",
    // numbers
    "00",
    "01",
    "-01",
    "0.",
    "0.e1",
    ".5",
    "-.5",
    "+1",
    "1.",
    "1.5.",
    "1e",
    "1e+",
    "1e-",
    "1E5",
    "1e+5",
    "1e-5",
    "1.5e3",
    "-1.5E-3",
    "0e0",
    "-0e0",
    "0.0",
    "-0.0",
    "1e400",
    "-1e400",
    "1e-400",
    "-1e-400",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "2.2250738585072011e-308",
    "2.2250738585072012e-308",
    "4.9406564584124654e-324",
    "2.4703282292062327e-324",
    "2.4703282292062328e-324",
    "0.1",
    "0.2",
    "0.30000000000000004",
    "9007199254740993",
    "9007199254740993.0",
    "18446744073709551615",
    "18446744073709551616",
    "-18446744073709551615",
    "-18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "-123456789012345678901234567890.5e-10",
    "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203124",
    "1.00000000000000011102230246251565404236316680908203126",
    "7.2057594037927933e16",
    "8.98846567431158e307",
    "1e2147483647",
    "1e2147483648",
    "1e-2147483648",
    "0e2147483648",
    "0.000e99999999999",
    "-0e99999999999",
    "1e99999999999",
    "-1e99999999999",
    "1e-99999999999",
    "0.1e2147483647",
    "10e2147483646",
    "1e000000000000000000001",
    "[1e400]",
    "{\"a\":1e400}",
    "[-]",
    "[-a]",
    "-",
    "--1",
    "1e1.5",
    "[0x10]",
    "1_000",
    "１",
    // strings and escapes
    "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
    "\"\\u0041\\u00e9\\u4e2d\"",
    "\"\\uD83D\\uDE00\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"\\udc00\"",
    "\"\\ud800\\ud800\"",
    "\"\\ud800\\ud800\\udc00\"",
    "\"\\ud800x\"",
    "\"\\ud800\\n\"",
    "\"\\ud800\\u0041\"",
    "\"\\ud800\\u00\"",
    "\"\\ud800\\uzzzz\"",
    "\"\\udfff\\udbff\"",
    "\"\\ud800\\",
    "\"\\ud800\\u",
    "\"\\u12\"",
    "\"\\u12",
    "\"\\u\"",
    "\"\\uGGGG\"",
    "\"\\x41\"",
    "\"\\'\"",
    "\"\\é\"",
    "\"\\",
    "\"abc",
    "\"a\u{1}b\"",
    "\"a\tb\"",
    "\"a\nb\"",
    "\"\u{7f}\"",
    "\"é中😀\"",
    "\"\\u0000\"",
    "{\"\\ud800\":\"\\udc00\"}",
    "[\"\\\\ud800\"]",
    "\"\\\\\\ud800\"",
    "[\"a\",\"\\ud800",
    "{\"a\":\"\\ud800\\udc00\\ud800\"}",
    "\"\\uD800\\uDC00\"",
    "\"\\uDBFF\\uDFFF\"",
    "x\"\\ud800\"",
    "[1 \\ud800]",
    "{\"a\" \"\\ud800\"}",
    // errors on later lines
    "[\n  1,\n  2\n  3\n]",
    "{\n \"a\": 1,\n \"b\": tru\n}",
    "\n\n\"\\q\"",
    "[\r\n\"a\u{2}\"]",
];

#[test]
fn corpus_matches_serde_json() {
    for text in CORPUS {
        check_text(text);
    }
}

/// The `json` fuzz target's seeds and any crash it found, kept in
/// `fuzz/seeds/json` and `fuzz/regressions/json`.
#[test]
fn kept_fuzz_inputs_replay_cleanly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join("json")) else {
            continue;
        };
        for entry in entries.flatten() {
            check_json(&std::fs::read(entry.path()).unwrap_or_default());
            count += 1;
        }
    }
    assert!(count >= 7, "expected the seed corpus, found {count} files");
}

#[test]
fn long_numbers_match_serde_json() {
    let digits = "12345678901234567890".repeat(60);
    for text in [
        digits.clone(),
        format!("-{digits}"),
        format!("0.{digits}"),
        format!("{digits}e-1200"),
        format!("{digits}.{digits}e-2400"),
        format!("0.{}1", "0".repeat(400)),
        format!("0.{}1e400", "0".repeat(400)),
        format!("1{}", "0".repeat(400)),
        format!("{}e-100", "9".repeat(420)),
        // halfway between two doubles, then a nonzero digit far beyond 768 digits
        format!(
            "1.00000000000000011102230246251565404236316680908203125{}1",
            "0".repeat(900)
        ),
        format!(
            "1.00000000000000011102230246251565404236316680908203125{}",
            "0".repeat(900)
        ),
        format!(
            "2.4703282292062327208828439643411068618252990130716238221279284125033775364{}e-324",
            "0".repeat(700)
        ),
        format!(
            "2.4703282292062327208828439643411068618252990130716238221279284125033775364{}1e-324",
            "0".repeat(700)
        ),
    ] {
        check_text(&text);
    }
}

#[test]
fn nesting_stops_where_serde_json_does() {
    for depth in [1, 64, 126, 127, 128, 129, 1000, 100_000] {
        for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            let ours = parse(&text).map_err(|e| e.to_string());
            assert_eq!(ours.is_ok(), depth < NESTING_LIMIT, "depth {depth}");
            if depth <= 1000 {
                check_text(&text);
            }
            // Dropping a deep value recurses: take it apart flat.
            let mut stack: Vec<Value> = ours.into_iter().collect();
            while let Some(value) = stack.pop() {
                match value {
                    Value::Array(items) => stack.extend(items),
                    Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
        }
        check_text(&format!("{}]", "[".repeat(depth)));
        check_text(&"[".repeat(depth.min(1000)));
    }
}

/// Objects past the pairwise duplicate check (16 entries) find repeated
/// keys by sorting: the same first places and last values as serde_json.
#[test]
fn wide_objects_with_repeated_keys_match_serde_json() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for len in [15, 16, 17, 18, 40, 200, 2000] {
        for spread in [1, 2, 17, 100, 5000] {
            let entries: Vec<String> = (0..len)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    format!("\"k{}\":{i}", state % spread)
                })
                .collect();
            check_text(&format!("{{{}}}", entries.join(",")));
            check_text(&format!("[{{{}}},{{}}]", entries.join(",")));
        }
    }
}

/// A megabyte of object keys, all distinct or all the same: parsed in
/// O(n log n) (a lookup per key would take minutes here).
#[test]
fn hostile_objects_parse_quickly() {
    let distinct: Vec<String> = (0..100_000).map(|i| format!("\"{i:07}\":0")).collect();
    let text = format!("{{{}}}", distinct.join(","));
    assert!(text.len() > 1_000_000);
    let started = std::time::Instant::now();
    let value = parse(&text).unwrap_or_default();
    assert_eq!(value.as_object().map(|m| m.len()), Some(100_000));
    let same = format!("{{{}}}", vec!["\"k\":1"; 150_000].join(","));
    let value = parse(&same).unwrap_or_default();
    assert_eq!(value.to_string(), r#"{"k":1}"#);
    let elapsed = started.elapsed();
    assert!(elapsed.as_secs() < 20, "{elapsed:?}");
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    assert_eq!(parse(r#""a\ud800b""#).ok(), Some(Value::from("a\u{fffd}b")));
    assert_eq!(
        parse(r#""\udc00\ud83d\ude00""#).ok(),
        Some(Value::from("\u{fffd}😀"))
    );
}

/// Pieces that make up JSON texts, valid and broken.
const PIECES: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "\"a\"",
    "\"key\"",
    "\\",
    "\\u",
    "\\ud800",
    "\\udc00",
    "\\uD83D",
    "\\uDE00",
    "\\u00e9",
    "\\n",
    "\\\"",
    "\\/",
    "\\x",
    "0",
    "1",
    "9",
    "-",
    "+",
    ".",
    "e",
    "E",
    "00",
    "1e400",
    "1e-400",
    "18446744073709551616",
    "-9223372036854775809",
    "null",
    "nul",
    "true",
    "false",
    "fals",
    " ",
    "\n",
    "\r\n",
    "\t",
    "é",
    "😀",
    "\u{1}",
    "\u{1f}",
    "x",
    "/",
    "'",
    "0.5",
    "1e5",
    "123456789012345678901234567890",
    "1e2147483648",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

fn number() -> impl Strategy<Value = String> {
    let digits = |max| prop::collection::vec(prop::sample::select(&b"0123456789"[..]), 0..max);
    (
        prop::option::of(Just("-")),
        digits(30),
        prop::option::of(digits(30)),
        prop::option::of((
            prop::sample::select(&["e", "E", "e+", "e-", "E-"][..]),
            digits(12),
        )),
    )
        .prop_map(|(sign, int, frac, exp)| {
            let mut text = String::from(sign.unwrap_or(""));
            text.push_str(&String::from_utf8_lossy(&int));
            if let Some(frac) = frac {
                text.push('.');
                text.push_str(&String::from_utf8_lossy(&frac));
            }
            if let Some((e, digits)) = exp {
                text.push_str(e);
                text.push_str(&String::from_utf8_lossy(&digits));
            }
            text
        })
}

fn value() -> impl Strategy<Value = String> {
    let string = prop::collection::vec(
        prop::sample::select(
            &[
                "a",
                "é",
                "\\n",
                "\\u0041",
                "\\ud800",
                "\\udc00",
                "\\uD83D\\uDE00",
                "\\\\",
                "\\\"",
                " ",
            ][..],
        ),
        0..6,
    )
    .prop_map(|p| format!("\"{}\"", p.concat()));
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        number(),
        string.clone(),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        let ws = prop::sample::select(&["", " ", "\n", "\t", "\r\n "][..]);
        prop_oneof![
            (
                prop::collection::vec((inner.clone(), ws.clone()), 0..6),
                ws.clone()
            )
                .prop_map(|(items, ws)| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(v, w)| format!("{w}{v}{w}"))
                        .collect();
                    format!("[{}{ws}]", items.join(","))
                }),
            (
                prop::collection::vec(
                    (
                        prop::sample::select(
                            &["\"a\"", "\"b\"", "\"\"", "\"\\u0061\"", "\"é\""][..]
                        ),
                        inner,
                        ws.clone()
                    ),
                    0..6
                ),
                ws
            )
                .prop_map(|(entries, ws)| {
                    let entries: Vec<String> = entries
                        .into_iter()
                        .map(|(k, v, w)| format!("{w}{k}{w}:{w}{v}"))
                        .collect();
                    format!("{{{}{ws}}}", entries.join(","))
                }),
        ]
    })
}

/// A valid-looking text with a few bytes changed.
fn mutated() -> impl Strategy<Value = String> {
    (
        value(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..3u8,
                prop::sample::select(PIECES),
            ),
            0..3,
        ),
    )
        .prop_map(|(text, edits)| {
            let mut text = text.into_bytes();
            for (at, kind, piece) in edits {
                let at = at.index(text.len() + 1);
                match kind {
                    0 if at < text.len() => {
                        text.remove(at);
                    }
                    1 if at < text.len() => {
                        text.splice(at..=at, piece.bytes());
                    }
                    _ => {
                        text.splice(at..at, piece.bytes());
                    }
                }
            }
            String::from_utf8_lossy(&text).into_owned()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn random_values_match_serde_json(text in value()) {
        check_text(&text);
    }

    #[test]
    fn mutated_values_match_serde_json(text in mutated()) {
        check_text(&text);
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them(text in value()) {
        if let (Ok(ours), Ok(theirs)) = (parse(&text), oracle(&text)) {
            check_written(&ours, &theirs, &text);
        }
    }

    #[test]
    fn token_soup_matches_serde_json(text in soup()) {
        check_text(&text);
    }

    #[test]
    fn numbers_match_serde_json(text in number()) {
        check_text(&text);
        check_text(&format!("[{text}]"));
    }

    #[test]
    fn random_floats_round_trip(bits in any::<u64>()) {
        let f = f64::from_bits(bits);
        if f.is_finite() {
            for text in [format!("{f:e}"), format!("{f:?}"), format!("{f}")] {
                check_text(&text);
            }
        }
    }
}

/// The exact decimal expansion of a finite double, `digits` with the
/// decimal point after `point` of them.
fn exact_decimal(f: f64) -> (String, i64) {
    let text = format!("{:.1100e}", f.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits = mantissa.replace('.', "").trim_end_matches('0').to_string();
    (digits, exp.parse::<i64>().unwrap_or(0) + 1)
}

/// Digit strings `a + b` (same point), for the exact halfway points.
fn add_decimals((a, pa): (String, i64), (b, pb): (String, i64)) -> (String, i64) {
    let point = pa.max(pb) + 1;
    let pad = |s: &str, p: i64, len: usize| {
        let mut v = vec![0u8; len];
        for (i, c) in s.bytes().enumerate() {
            v[(point - p) as usize + i] = c - b'0';
        }
        v
    };
    let len = (point - pa.min(pb)) as usize + a.len().max(b.len()) + 2;
    let (x, y) = (pad(&a, pa, len), pad(&b, pb, len));
    let mut out = vec![0u8; len];
    let mut carry = 0;
    for i in (0..len).rev() {
        let s = x[i] + y[i] + carry;
        out[i] = s % 10;
        carry = s / 10;
    }
    let digits: String = out.iter().map(|d| char::from(b'0' + d)).collect();
    let lead = digits.len() - digits.trim_start_matches('0').len();
    (
        digits
            .trim_start_matches('0')
            .trim_end_matches('0')
            .to_string(),
        point - lead as i64,
    )
}

/// Halving a decimal: `x / 2` exactly.
fn halve((digits, point): (String, i64)) -> (String, i64) {
    let mut out = String::new();
    let mut rem = 0;
    for c in digits.bytes().chain([b'0']) {
        let v = rem * 10 + (c - b'0');
        out.push(char::from(b'0' + v / 2));
        rem = v % 2;
    }
    let lead = out.len() - out.trim_start_matches('0').len();
    (
        out.trim_start_matches('0')
            .trim_end_matches('0')
            .to_string(),
        point - lead as i64,
    )
}

fn text_of((digits, point): &(String, i64), tail: &str) -> String {
    format!("0.{digits}{tail}e{point}")
}

/// Floats written exactly, and exactly halfway between neighbours, and a hair
/// either side of halfway: each parses as `str::parse` (correctly rounded)
/// says, and as serde_json does.
fn check_hard_float(f: f64) {
    let f = f.abs();
    let next = f64::from_bits(f.to_bits() + 1);
    if !f.is_finite() || !next.is_finite() {
        return;
    }
    let exact = exact_decimal(f);
    let half_ulp = halve(exact_decimal(next - f));
    let mid = add_decimals(exact.clone(), half_ulp);
    for text in [
        text_of(&exact, ""),
        text_of(&mid, ""),
        text_of(&mid, "000000001"),
        format!(
            "0.{}4999999e{}",
            mid.0.strip_suffix('5').unwrap_or(&mid.0),
            mid.1
        ),
        format!("-{}", text_of(&mid, "")),
    ] {
        let want: f64 = text.parse().unwrap_or(f64::NAN);
        let got = parse(&text).ok().and_then(|v| v.as_f64());
        assert_eq!(got.map(f64::to_bits), Some(want.to_bits()), "{text}");
        check_text(&text);
    }
}

#[test]
fn halfway_floats_round_to_even() {
    for f in [
        1.0,
        0.1,
        5e-324,
        1e-323,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE - 5e-324,
        f64::MAX,
        f64::MAX / 2.0,
        9007199254740992.0,
        1e23,
        8.98846567431158e307,
        1.5,
        123456.789,
    ] {
        check_hard_float(f);
    }
    assert_eq!(
        parse("1.7976931348623158e308")
            .ok()
            .and_then(|v| v.as_f64()),
        Some(f64::MAX)
    );
    assert!(parse("1.7976931348623159e308").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_halfway_floats_round_to_even(bits in any::<u64>()) {
        check_hard_float(f64::from_bits(bits));
    }

    #[test]
    fn random_subnormal_halfway_floats_round_to_even(bits in 0u64..(1 << 53)) {
        check_hard_float(f64::from_bits(bits));
    }

    #[test]
    fn decimal_strings_parse_like_core(
        int in "[1-9][0-9]{0,40}|0",
        frac in proptest::option::of("[0-9]{1,40}"),
        exp in proptest::option::of(-400i32..400),
    ) {
        let mut text = int;
        if let Some(frac) = frac {
            text = format!("{text}.{frac}");
        }
        if let Some(exp) = exp {
            text = format!("{text}e{exp}");
        }
        let want: f64 = text.parse().unwrap_or(f64::NAN);
        let got = parse(&text).ok().and_then(|v| v.as_f64());
        if want.is_finite() {
            if text.contains(['.', 'e']) || got.is_some_and(|g| g != want) {
                prop_assert_eq!(got.map(f64::to_bits), Some(want.to_bits()), "{}", text);
            }
        } else {
            prop_assert!(got.is_none());
        }
        check_text(&text);
    }
}

/// `to_json` (by way of `to_value` and `json::to_text` for agent → page)
/// writes every message shape as serde_json writes the same message (fields
/// in wire order), also with awkward content: each text below is already in that order, or comes with
/// the text expected back.
#[test]
fn text_by_way_of_a_value_is_serde_json_text() {
    use toolmark_bridge::protocol::{parse_agent_to_page, parse_page_to_agent};
    let limit = toolmark_bridge::protocol::DEFAULT_MAX_MESSAGE_BYTES;
    // serde_json's text of the value serde_json reads from `text`.
    let serde_text = |text: &str| {
        oracle(text)
            .map(|value| value.to_string())
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    let to_page = [
        r#"{"protocol":1,"type":"call","clientId":"p","id":"i","rev":2,"tool":"t","input":{"z":[1,-2.5e-7,1e300,"\ud800é\n\u0001"],"a":null}}"#,
        r#"{"protocol":1,"type":"call","clientId":"p","id":"i","tool":"t","input":18446744073709551615}"#,
        r#"{"protocol":1,"type":"describe","clientId":"p","id":"i","tool":"t"}"#,
        r#"{"protocol":1,"type":"cancel","clientId":"p","id":"i"}"#,
    ];
    let result = |r: &str| {
        format!(r#"{{"protocol":1,"type":"result","clientId":"p","id":"i","result":{r}}}"#)
    };
    let mut to_agent: Vec<(String, String)> = [
        r#"{"status":"ok"}"#,
        r#"{"status":"ok","data":{"b":[true,{"x":-0.0}],"a":"\"q\""}}"#,
        r#"{"status":"invalid","issues":[{"path":"a/0","message":"m"}]}"#,
        r#"{"status":"refused","code":"stale","message":"m","rev":3}"#,
        r#"{"status":"refused","code":"busy","message":"m"}"#,
        r#"{"status":"needs_confirmation","confirmId":"c","summary":"s","changes":[{"path":"a","before":1,"after":[2]}]}"#,
        r#"{"status":"needs_confirmation","confirmId":"c","summary":"s"}"#,
        r#"{"status":"cancelled","by":"policy"}"#,
        r#"{"status":"error","message":"boom"}"#,
    ]
    .iter()
    .map(|r| (result(r), result(r)))
    .collect();
    to_agent.extend([
        (
            r#"{"protocol":1,"type":"manifest","clientId":"p","rev":0,"tools":[{"name":"a.b","llmName":"a__b","title":"T","description":"d","hints":{"x":[1],"readOnly":true,"untrustedContent":false},"mode":"stepwise","z":{"inputSchema":1}},{"name":"c","llmName":"c","description":"","hints":{"destructive":true,"consequential":false}}]}"#.to_string(),
            // Known hints first, in declaration order, then the unknown ones.
            r#"{"protocol":1,"type":"manifest","clientId":"p","rev":0,"tools":[{"name":"a.b","llmName":"a__b","title":"T","description":"d","hints":{"readOnly":true,"untrustedContent":false,"x":[1]},"mode":"stepwise","z":{"inputSchema":1}},{"name":"c","llmName":"c","description":"","hints":{"consequential":false,"destructive":true}}]}"#.to_string(),
        ),
        (
            r#"{"protocol":1,"type":"changed","clientId":"p","rev":7}"#.to_string(),
            r#"{"protocol":1,"type":"changed","clientId":"p","rev":7}"#.to_string(),
        ),
        (
            r#"{"rev":7,"clientId":"p","type":"changed","protocol":1}"#.to_string(),
            r#"{"type":"changed","protocol":1,"clientId":"p","rev":7}"#.to_string(),
        ),
        (
            r#"{"protocol":1,"type":"confirmed","clientId":"p","confirmId":"c","result":{"status":"ok","data":0.1}}"#.to_string(),
            r#"{"type":"confirmed","protocol":1,"clientId":"p","confirmId":"c","result":{"status":"ok","data":0.1}}"#.to_string(),
        ),
    ]);
    // `type` goes first.
    let type_first = |text: &str| {
        let Ok(serde_json::Value::Object(mut map)) = oracle(text) else {
            panic!("{text}: not an object");
        };
        let message_type = map.shift_remove("type").unwrap_or_default();
        let mut ordered = serde_json::Map::new();
        ordered.insert("type".into(), message_type);
        ordered.extend(map);
        serde_json::Value::Object(ordered).to_string()
    };
    // The same value in the same order (floats compared as serde_json
    // writes them), and the same bytes when there is no float.
    let check = |written: String, want: &str| {
        let want = type_first(want);
        assert_eq!(serde_text(&written), want);
        if !oracle(&written).is_ok_and(|value| has_float(&value)) {
            assert_eq!(written, want);
        }
    };
    for text in to_page {
        let message = parse_agent_to_page(text, limit).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(message.to_json(), to_text(&message.to_value()));
        check(message.to_json(), text);
    }
    for (text, want) in &to_agent {
        let message = parse_page_to_agent(text, limit).unwrap_or_else(|e| panic!("{text}: {e}"));
        // What the page writes reads back as the same message.
        let again = parse_page_to_agent(&message.to_json(), limit).map(|m| m.to_json());
        assert_eq!(again.ok(), Some(message.to_json()));
        check(message.to_json(), want);
    }
    // Floats are written as they were parsed.
    let text = to_page[0];
    let message = parse_agent_to_page(text, limit).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert!(message.to_json().contains("[1,-2.5e-7,1e300,"));
    for text in CORPUS {
        if let (Ok(ours), Ok(theirs)) = (parse(text), oracle(text)) {
            check_written(&ours, &theirs, text);
        }
    }
    let controls: String = (0u8..0x80).map(char::from).collect();
    let string = format!("{controls}é\u{2028}😀");
    assert_eq!(
        to_text(&Value::from(string.as_str())),
        serde_json::Value::from(string).to_string()
    );
}
