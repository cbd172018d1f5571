//! `pattern` / `patternProperties` in linear time where possible.
//!
//! JS `RegExp` backtracks: `^(a+)+$` against 30 `a`s and a `!` takes
//! seconds, doubling with each `a`. [`linear_syntax`] translates the
//! ECMA-262 patterns (`u` flag, no other flags) whose meaning it knows
//! exactly into `regex-lite` syntax, whose searches are `O(m * n)` (regex
//! size times input length) whatever the pattern; [`LinearPatterns`] runs
//! those with `regex-lite` and hands every other pattern to a fallback
//! matcher (the browser's `RegExp` in the shipped module). The fallback
//! keeps what `regex-lite` cannot express (lookaround, backreferences,
//! `\p{…}`, named groups) and decides every pattern the translation does not
//! accept, so an invalid ECMA-262 pattern stays invalid.
//!
//! Accepted, with their ECMA-262 (`u` flag) meaning:
//! literals; `.` (anything but `\n`, `\r`, U+2028, U+2029); `^` and `$`
//! (input start and end, no multiline); `\b` and `\B` (ASCII word
//! boundaries); `|`; `(…)` and `(?:…)` (both run as non-capturing groups:
//! nothing reads the captures); `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each
//! greedy or lazy; `[…]` and `[^…]` of characters, ranges and the escapes
//! below; `\d` `\D` `\w` `\W` (ASCII), `\s` `\S` (ECMA-262's WhiteSpace and
//! LineTerminator set); `\f` `\n` `\r` `\t` `\v`, `\0`, `\cX`, `\xHH`,
//! `\uHHHH` (a surrogate pair as one code point), `\u{H…}`; `\` before a
//! syntax character or `/`; in a class also `\b` (backspace) and `\-`.
//! Everything else, including every syntax error, goes to the fallback.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice
)]

use crate::prelude::*;
use core::iter::Peekable;
use core::str::Chars;

#[cfg(feature = "std")]
use super::PatternMatcher;
#[cfg(feature = "std")]
use crate::vecmap::VecMap;
#[cfg(feature = "std")]
use core::cell::RefCell;

/// Inclusive code point ranges, ascending and disjoint.
type Set = &'static [(u32, u32)];

const DIGIT: Set = &[(0x30, 0x39)];
const WORD: Set = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// ECMA-262 WhiteSpace (TAB, VT, FF, ZWNBSP, USP = Zs) and LineTerminator
/// (LF, CR, LS, PS).
const SPACE: Set = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
/// What `.` does not match: ECMA-262's LineTerminator.
const LINE_TERMINATOR: Set = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];

/// Which engine runs a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `regex-lite`: `O(m * n)` in the input length.
    Linear,
    /// The injected fallback matcher (JS `RegExp` in the shipped module).
    Fallback,
}

/// The `regex-lite` pattern with the same meaning as the ECMA-262 `pattern`
/// (`u` flag), or `None` when the translation does not accept it (see the
/// module docs).
pub fn linear_syntax(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Whether the previous term takes a quantifier (an atom, not an
    // assertion, `|`, `(` or a quantifier).
    let mut quantifiable = false;
    let mut open_groups = 0usize;
    while let Some(c) = chars.next() {
        let atom = match c {
            '^' | '$' | '|' => {
                out.push(c);
                false
            }
            '(' => {
                if chars.peek() == Some(&'?') {
                    chars.next();
                    if chars.next() != Some(':') {
                        return None;
                    }
                }
                open_groups += 1;
                out.push_str("(?:");
                false
            }
            ')' => {
                open_groups = open_groups.checked_sub(1)?;
                out.push(')');
                true
            }
            '*' | '+' | '?' | '{' => {
                if !quantifiable {
                    return None;
                }
                if c == '{' {
                    push_bounds(&mut chars, &mut out)?;
                } else {
                    out.push(c);
                }
                if chars.peek() == Some(&'?') {
                    chars.next();
                    out.push('?');
                }
                false
            }
            '.' => {
                push_set(&mut out, LINE_TERMINATOR, true);
                true
            }
            '[' => {
                push_class(&mut chars, &mut out)?;
                true
            }
            '\\' => match chars.next()? {
                'b' => {
                    out.push_str("\\b");
                    false
                }
                'B' => {
                    out.push_str("\\B");
                    false
                }
                e => {
                    match class_escape(e, &mut chars)? {
                        ClassAtom::Char(c) => push_char(&mut out, c),
                        ClassAtom::Set(set, negated) => push_set(&mut out, set, negated),
                    }
                    true
                }
            },
            // Lone `]`, `{` and `}` are syntax errors with the `u` flag.
            ']' | '}' => return None,
            c => {
                push_char(&mut out, c);
                true
            }
        };
        quantifiable = atom;
    }
    (open_groups == 0).then_some(out)
}

/// `{n}`, `{n,}` or `{n,m}` after the `{`, copied with n ≤ m checked.
fn push_bounds(chars: &mut Peekable<Chars<'_>>, out: &mut String) -> Option<()> {
    let min = number(chars)?;
    let max = match chars.next()? {
        '}' => Some(min),
        ',' if chars.peek() == Some(&'}') => {
            chars.next();
            None
        }
        ',' => {
            let max = number(chars)?;
            (chars.next()? == '}' && min <= max).then_some(max)?;
            Some(max)
        }
        _ => return None,
    };
    out.push('{');
    out.push_str(&min.to_string());
    match max {
        Some(max) if max == min => {}
        Some(max) => {
            out.push(',');
            out.push_str(&max.to_string());
        }
        None => out.push(','),
    }
    out.push('}');
    Some(())
}

/// Decimal digits (at least one) as a `u32`; `None` on overflow.
fn number(chars: &mut Peekable<Chars<'_>>) -> Option<u32> {
    let mut value: Option<u32> = None;
    while let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
        chars.next();
        value = Some(value.unwrap_or(0).checked_mul(10)?.checked_add(digit)?);
    }
    value
}

enum ClassAtom {
    Char(char),
    /// A set, or its complement when `true`.
    Set(Set, bool),
}

/// The escape `\e…` (after the backslash) as a character or set, valid
/// both inside and outside a class; `None` for everything else.
fn class_escape(e: char, chars: &mut Peekable<Chars<'_>>) -> Option<ClassAtom> {
    let c = match e {
        'd' | 'D' => return Some(ClassAtom::Set(DIGIT, e == 'D')),
        'w' | 'W' => return Some(ClassAtom::Set(WORD, e == 'W')),
        's' | 'S' => return Some(ClassAtom::Set(SPACE, e == 'S')),
        'f' => '\u{0C}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\u{0B}',
        // `\0` followed by a digit is a syntax error with the `u` flag.
        '0' if !chars.peek().is_some_and(char::is_ascii_digit) => '\0',
        'c' => {
            let letter = chars.next().filter(char::is_ascii_alphabetic)?;
            char::from_u32(u32::from(letter) % 32)?
        }
        'x' => {
            let high = chars.next()?.to_digit(16)?;
            let low = chars.next()?.to_digit(16)?;
            char::from_u32(high * 16 + low)?
        }
        'u' => unicode_escape(chars)?,
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
        | '/' => e,
        _ => return None,
    };
    Some(ClassAtom::Char(c))
}

/// After `\u`: `HHHH`, a surrogate pair `HHHH\uHHHH`, or `{H…}`.
fn unicode_escape(chars: &mut Peekable<Chars<'_>>) -> Option<char> {
    if chars.peek() == Some(&'{') {
        chars.next();
        let mut value = 0u32;
        let mut digits = 0;
        loop {
            match chars.next()? {
                '}' if digits > 0 => return char::from_u32(value),
                c => {
                    value = value.checked_mul(16)?.checked_add(c.to_digit(16)?)?;
                    if value > 0x10_FFFF {
                        return None;
                    }
                    digits += 1;
                }
            }
        }
    }
    let unit = hex4(chars)?;
    if (0xD800..0xDC00).contains(&unit) {
        // A high surrogate is a code point only with its low half.
        if chars.next()? != '\\' || chars.next()? != 'u' {
            return None;
        }
        let low = hex4(chars)?;
        if !(0xDC00..0xE000).contains(&low) {
            return None;
        }
        return char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
    }
    char::from_u32(unit)
}

fn hex4(chars: &mut Peekable<Chars<'_>>) -> Option<u32> {
    let mut value = 0;
    for _ in 0..4 {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

/// `[…]` / `[^…]` after the `[`: characters, ranges of two characters and
/// class escapes. An empty class goes to the fallback.
fn push_class(chars: &mut Peekable<Chars<'_>>, out: &mut String) -> Option<()> {
    out.push('[');
    if chars.peek() == Some(&'^') {
        chars.next();
        out.push('^');
    }
    let mut empty = true;
    loop {
        let first = match chars.next()? {
            ']' if empty => return None,
            ']' => break,
            c => class_atom(c, chars)?,
        };
        empty = false;
        let range = {
            let mut ahead = chars.clone();
            ahead.next() == Some('-') && ahead.peek().is_some_and(|&c| c != ']')
        };
        if !range {
            match first {
                ClassAtom::Char(c) => push_char(out, c),
                ClassAtom::Set(set, negated) => push_set_items(out, set, negated),
            }
            continue;
        }
        chars.next();
        let last = chars.next()?;
        let (ClassAtom::Char(low), ClassAtom::Char(high)) = (first, class_atom(last, chars)?)
        else {
            // A range with a class escape at either end is a syntax error
            // with the `u` flag.
            return None;
        };
        if low > high {
            return None;
        }
        push_char(out, low);
        out.push('-');
        push_char(out, high);
    }
    out.push(']');
    Some(())
}

fn class_atom(c: char, chars: &mut Peekable<Chars<'_>>) -> Option<ClassAtom> {
    if c != '\\' {
        return Some(ClassAtom::Char(c));
    }
    match chars.next()? {
        'b' => Some(ClassAtom::Char('\u{08}')),
        '-' => Some(ClassAtom::Char('-')),
        e => class_escape(e, chars),
    }
}

/// A character matching itself: ASCII punctuation escaped (`regex-lite`
/// takes `\` before any ASCII punctuation but `<` and `>`, which are
/// literal anyway), everything else as is.
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_punctuation() && c != '<' && c != '>' {
        out.push('\\');
    }
    out.push(c);
}

/// A set (or its complement) as a bracketed class.
fn push_set(out: &mut String, set: Set, negated: bool) {
    out.push('[');
    if negated {
        out.push('^');
    }
    push_set_items(out, set, false);
    out.push(']');
}

/// A set's ranges, or its complement's, as class items.
fn push_set_items(out: &mut String, set: Set, negated: bool) {
    if !negated {
        for &(low, high) in set {
            push_range(out, low, high);
        }
        return;
    }
    let mut next = 0u32;
    for &(low, high) in set {
        if low > next {
            push_range(out, next, low - 1);
        }
        next = high + 1;
    }
    if next <= 0x10_FFFF {
        push_range(out, next, 0x10_FFFF);
    }
}

fn push_range(out: &mut String, low: u32, high: u32) {
    push_code(out, low);
    if high != low {
        out.push('-');
        push_code(out, high);
    }
}

/// `\x{H…}`: a code point by number (ranges may span the surrogates).
fn push_code(out: &mut String, code: u32) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push_str("\\x{");
    let mut started = false;
    for shift in (0..6).rev() {
        let nibble = (code >> (shift * 4)) & 0xF;
        if nibble != 0 || started || shift == 0 {
            started = true;
            out.push(char::from(
                HEX.get(nibble as usize).copied().unwrap_or(b'0'),
            ));
        }
    }
    out.push('}');
}

/// The `regex-lite` regex for `pattern`, when [`linear_syntax`] accepts it
/// and `regex-lite` compiles it within its size limits.
#[cfg(feature = "std")]
pub fn linear_regex(pattern: &str) -> Option<regex_lite::Regex> {
    regex_lite::Regex::new(&linear_syntax(pattern)?).ok()
}

/// Most distinct patterns kept compiled (tool schemas use a handful).
#[cfg(feature = "std")]
const CACHE_LIMIT: usize = 256;

/// A [`PatternMatcher`] that runs each pattern with `regex-lite` when
/// [`linear_regex`] takes it, and with `fallback` otherwise. Compiled
/// patterns (and the fallback decision) are cached.
#[cfg(feature = "std")]
pub struct LinearPatterns {
    fallback: Box<dyn PatternMatcher>,
    cache: RefCell<VecMap<String, Option<regex_lite::Regex>>>,
}

#[cfg(feature = "std")]
impl LinearPatterns {
    pub fn new(fallback: Box<dyn PatternMatcher>) -> LinearPatterns {
        LinearPatterns {
            fallback,
            cache: RefCell::default(),
        }
    }

    /// Which engine runs `pattern`.
    pub fn engine(&self, pattern: &str) -> Engine {
        match self.linear_match(pattern, "") {
            Some(_) => Engine::Linear,
            None => Engine::Fallback,
        }
    }

    /// `Some(matched)` when `regex-lite` runs `pattern`.
    fn linear_match(&self, pattern: &str, text: &str) -> Option<bool> {
        let Ok(mut cache) = self.cache.try_borrow_mut() else {
            return linear_regex(pattern).map(|re| re.is_match(text));
        };
        cache
            .cached(pattern, CACHE_LIMIT, || linear_regex(pattern))?
            .as_ref()
            .map(|re| re.is_match(text))
    }
}

#[cfg(feature = "std")]
impl PatternMatcher for LinearPatterns {
    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        match self.linear_match(pattern, text) {
            Some(matched) => Ok(matched),
            None => self.fallback.is_match(pattern, text),
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    /// A fallback that says which text it was asked about, so a test sees
    /// which engine answered.
    struct Fallback;

    impl PatternMatcher for Fallback {
        fn is_match(&self, pattern: &str, _text: &str) -> Result<bool, String> {
            Err(format!("fallback: {pattern}"))
        }
    }

    fn linear() -> LinearPatterns {
        LinearPatterns::new(Box::new(Fallback))
    }

    fn matches(pattern: &str, text: &str) -> bool {
        match linear().is_match(pattern, text) {
            Ok(matched) => matched,
            Err(e) => panic!("{pattern:?} went to the fallback: {e}"),
        }
    }

    #[test]
    fn catastrophic_backtracking_patterns_run_in_regex_lite() {
        let m = linear();
        for pattern in [
            "^(a+)+$",
            "^(a|a)*$",
            "^(a*)*b$",
            "^([a-z]+\\s?)+$",
            "(\\w+\\d*)+x",
        ] {
            assert_eq!(m.engine(pattern), Engine::Linear, "{pattern}");
        }
        let hostile = format!("{}!", "a".repeat(40));
        assert_eq!(m.is_match("^(a+)+$", &hostile), Ok(false));
        assert_eq!(m.is_match("^(a+)+$", &"a".repeat(40)), Ok(true));
        assert_eq!(m.is_match("^(a*)*b$", &hostile), Ok(false));
    }

    #[test]
    fn what_regex_lite_cannot_express_goes_to_the_fallback() {
        let m = linear();
        for pattern in [
            // Lookaround, backreferences, named groups, property escapes.
            "(?=a)",
            "(?!a)",
            "(?<=a)b",
            "(?<!a)b",
            "(a)\\1",
            "(?<n>a)\\k<n>",
            "(?<n>a)",
            "\\p{L}",
            "\\P{L}",
            "[\\p{L}]",
            "(?i:a)",
            // Syntax errors with the `u` flag: the fallback (RegExp) reports them.
            "(",
            ")",
            "(?:",
            "[",
            "[a",
            "]",
            "}",
            "{",
            "a{",
            "a{1",
            "a{,2}",
            "a{2,1}",
            "a{2,3x",
            "*",
            "a**",
            "a+*",
            "|*",
            "(*)",
            "^*",
            "$+",
            "\\b*",
            "\\",
            "\\a",
            "\\-",
            "\\e",
            "\\c1",
            "\\c",
            "\\x1",
            "\\xg0",
            "\\u12",
            "\\u{}",
            "\\u{110000}",
            "\\u{12",
            "\\uD800",
            "\\uDC00",
            "\\uD800\\u0041",
            "\\01",
            "[\\01]",
            "[\\B]",
            "[\\d-z]",
            "[a-\\d]",
            "[z-a]",
            "[]",
            "[^]",
            "\\8",
            "a{99999999999}",
        ] {
            assert_eq!(m.engine(pattern), Engine::Fallback, "{pattern}");
            assert!(m.is_match(pattern, "").is_err(), "{pattern}");
        }
        // The highest code point is one regex-lite can match, a range of
        // one character one it can hold.
        assert_eq!(m.engine("^[a-a]$"), Engine::Linear);
        assert_eq!(m.engine("^\\u{10FFFF}$"), Engine::Linear);
        assert_eq!(m.is_match("^\\u{10FFFF}$", "\u{10FFFF}"), Ok(true));
    }

    #[test]
    fn ecma_anchors_dot_and_escapes() {
        assert!(matches("^abc$", "abc"));
        assert!(!matches("^abc$", "abc\n"), "$ is the end of input only");
        assert!(!matches("^abc$", "x\nabc"), "^ is the start of input only");
        assert!(matches("b", "abc"), "unanchored search");
        for terminator in ["\n", "\r", "\u{2028}", "\u{2029}"] {
            assert!(
                !matches("^a.b$", &format!("a{terminator}b")),
                "{terminator:?}"
            );
        }
        assert!(matches("^a.b$", "a\u{0085}b"));
        assert!(matches("^.$", "🐲"), ". is one code point");
        assert!(matches("^\\t\\n\\r\\f\\v\\0$", "\t\n\r\u{0C}\u{0B}\0"));
        assert!(matches("^\\cC\\cc\\cZ$", "\u{3}\u{3}\u{1A}"));
        assert!(matches("^\\x41\\u0042\\u{43}\\u{1F432}$", "ABC🐲"));
        assert!(matches("^\\uD83D\\uDC32*$", "🐲🐲"));
        assert!(!matches("^\\uD83D\\uDC32*$", "🐉"));
        assert!(
            matches("^🐲*$", "🐲🐲"),
            "a quantifier repeats the whole code point"
        );
        assert!(matches(
            "^\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/$",
            "^$\\.*+?()[]{}|/"
        ));
        assert!(matches("^a/b$", "a/b"));
        assert!(matches("^#&~-<>\"' %,;:=@`!$", "#&~-<>\"' %,;:=@`!"));
        assert!(matches("\\bfoo\\b", "a foo b"));
        assert!(!matches("\\bfoo\\b", "afoo"));
        assert!(!matches("\\bé", "é"), "é is not an ECMA word character");
        assert!(matches("a\\bé", "aé"));
        assert!(matches("a\\Bb", "ab"));
        assert!(matches("^(?:)$|x", ""));
        assert!(matches("^(a|)$", ""));
        assert!(matches("^a{2}b{1,}c{1,2}d*?e+?f??g{0,1}?$", "aabbccdeeg"));
        assert!(!matches("^a{2}$", "aaa"));
    }

    #[test]
    fn ecma_classes() {
        assert!(matches("^[a-c]+$", "abcab"));
        assert!(!matches("^[^a-c]$", "b"));
        assert!(matches("^[^a-c]$", "é"));
        assert!(
            matches("^[a&&b]+$", "a&b"),
            "no set operations in ECMA classes"
        );
        assert!(matches("^[-a~~&&]+$", "-a~&"));
        assert!(matches("^[[]$", "["));
        assert!(matches("^[\\]]$", "]"));
        assert!(matches("^[a-]$", "-"));
        assert!(matches("^[-a]$", "-"));
        assert!(matches("^[\\-]$", "-"));
        assert!(matches("^[--/]$", "."));
        assert!(
            matches("^[\\b]$", "\u{08}"),
            "\\b in a class is a backspace"
        );
        assert!(matches("^[\\^]$", "^"));
        assert!(matches("^[a^]$", "^"));
        assert!(matches("^[\\x41-\\u{43}]+$", "ABC"));
        assert!(matches("^[\\uD83D\\uDC32]$", "🐲"));
        assert!(matches("^[🐉-🐲]$", "🐱"));
        assert!(matches("^[\\d\\s]+$", "1 2"));
        assert!(matches("^[^\\d\\s]+$", "ab"));
        assert!(matches("^[\\D]$", "a"));
        assert!(!matches("^[\\D]$", "1"));
        assert!(matches("^[\\W\\d]+$", "1!é"));
        assert!(matches("^[.*+?(){}|$]+$", ".*+?(){}|$"));
    }

    /// ECMA-262's `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP and the Zs category)
    /// and LineTerminator.
    fn ecma_space(c: char) -> bool {
        matches!(
            c,
            '\t' | '\u{0B}' | '\u{0C}' | ' ' | '\u{A0}' | '\u{FEFF}' | '\u{1680}' | '\u{2000}'
                ..='\u{200A}'
                    | '\u{202F}'
                    | '\u{205F}'
                    | '\u{3000}'
                    | '\n'
                    | '\r'
                    | '\u{2028}'
                    | '\u{2029}'
        )
    }

    #[test]
    fn ecma_character_class_escapes_over_the_code_points() {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let dot = |c: char| !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
        type Predicate = fn(char) -> bool;
        let cases: [(&str, Predicate, bool); 14] = [
            ("^\\s$", ecma_space, true),
            ("^\\S$", ecma_space, false),
            ("^[\\s]$", ecma_space, true),
            ("^[\\S]$", ecma_space, false),
            ("^[^\\s]$", ecma_space, false),
            ("^[^\\S]$", ecma_space, true),
            ("^\\d$", |c| c.is_ascii_digit(), true),
            ("^\\D$", |c| c.is_ascii_digit(), false),
            ("^[^\\D]$", |c| c.is_ascii_digit(), true),
            ("^\\w$", word, true),
            ("^\\W$", word, false),
            ("^[\\W]$", word, false),
            ("^.$", dot, true),
            ("^[^\\W]$", word, true),
        ];
        // Every code point up to U+3100 and around U+FEFF, and the top ones.
        let points = (0..0x3100)
            .chain(0xFE00..0xFF10)
            .chain(0x10_FF00..=0x10_FFFF);
        let points: Vec<char> = points.filter_map(char::from_u32).collect();
        for (pattern, predicate, expected) in cases {
            let re = linear_regex(pattern).unwrap_or_else(|| panic!("{pattern}"));
            for &c in &points {
                let mut text = [0; 4];
                let text = c.encode_utf8(&mut text);
                assert_eq!(
                    re.is_match(text),
                    predicate(c) == expected,
                    "{pattern} {c:?}"
                );
            }
        }
    }

    #[test]
    fn groups_become_non_capturing_and_sets_explicit() {
        assert_eq!(linear_syntax("^(a+)+$").as_deref(), Some("^(?:a+)+$"));
        assert_eq!(
            linear_syntax("(?:a|b){2,}?").as_deref(),
            Some("(?:a|b){2,}?")
        );
        assert_eq!(linear_syntax("a{3,3}").as_deref(), Some("a{3}"));
        assert_eq!(
            linear_syntax("\\d.").as_deref(),
            Some("[\\x{30}-\\x{39}][^\\x{A}\\x{D}\\x{2028}-\\x{2029}]")
        );
        assert_eq!(
            linear_syntax("[^\\W]").as_deref(),
            Some("[^\\x{0}-\\x{2F}\\x{3A}-\\x{40}\\x{5B}-\\x{5E}\\x{60}\\x{7B}-\\x{10FFFF}]")
        );
        assert_eq!(linear_syntax("[.-]").as_deref(), Some("[\\.\\-]"));
    }
}
