//! The oracle of `schema::pattern`'s tests: the same ECMA-262 subset
//! translated into `regex-lite` syntax and run by `regex-lite` (whose
//! limits, size and nesting, the engine keeps), with the same lookahead
//! plans. An answer of the engine that differs from this one is a bug of
//! either.
#![allow(dead_code)]

use core::iter::Peekable;
use core::str::Chars;

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

/// A translated pattern (`regex-lite` syntax) and what the line-wise
/// lookahead form needs to know about it.
struct Translation {
    syntax: String,
    /// Atoms, assertions, quantifiers, parentheses and `|`s: 1 for a lone atom.
    terms: usize,
    /// Whether some atom can match a line terminator.
    crosses_lines: bool,
    /// The code points the last atom matches.
    last_atom: Option<Atom>,
}

/// The `regex-lite` pattern with the same meaning as the ECMA-262 `pattern`
/// (`u` flag), or `None` when the translation does not accept it (see the
/// module docs). Lookaround is never accepted here; [`plan`] takes the
/// lookahead forms it can decide exactly.
pub fn linear_syntax(pattern: &str) -> Option<String> {
    translate(pattern).map(|t| t.syntax)
}

fn translate(pattern: &str) -> Option<Translation> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Whether the previous term takes a quantifier (an atom, not an
    // assertion, `|`, `(` or a quantifier).
    let mut quantifiable = false;
    let mut open_groups = 0usize;
    let mut terms = 0usize;
    let mut crosses_lines = false;
    let mut last_atom = None;
    let mut names: Vec<String> = Vec::new();
    while let Some(c) = chars.next() {
        terms += 1;
        let atom = match c {
            '^' | '$' | '|' => {
                out.push(c);
                false
            }
            '(' => {
                if chars.peek() == Some(&'?') {
                    chars.next();
                    match chars.next()? {
                        ':' => {}
                        // A named group is a group: nothing reads captures,
                        // and a `\k` backreference is refused as an escape.
                        '<' => {
                            let name = group_name(&mut chars)?;
                            if names.contains(&name) {
                                return None;
                            }
                            names.push(name);
                        }
                        _ => return None,
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
                last_atom = Some(Atom::of_set(LINE_TERMINATOR, true));
                true
            }
            '[' => {
                last_atom = Some(push_class(&mut chars, &mut out)?);
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
                    last_atom = Some(match class_escape(e, &mut chars)? {
                        ClassAtom::Char(c) => {
                            push_char(&mut out, c);
                            Atom::of_char(c)
                        }
                        ClassAtom::Set(set, negated) => {
                            push_set(&mut out, set, negated);
                            Atom::of_set(set, negated)
                        }
                    });
                    true
                }
            },
            // Lone `]`, `{` and `}` are syntax errors with the `u` flag.
            ']' | '}' => return None,
            c => {
                push_char(&mut out, c);
                last_atom = Some(Atom::of_char(c));
                true
            }
        };
        if atom && c != ')' {
            crosses_lines |= last_atom.as_ref().is_some_and(Atom::holds_terminator);
        }
        quantifiable = atom;
    }
    (open_groups == 0).then_some(Translation {
        syntax: out,
        terms,
        crosses_lines,
        last_atom,
    })
}

/// A group name after `(?<`, through the `>`: ASCII identifiers only
/// (`[A-Za-z_$][A-Za-z0-9_$]*`; other valid names are refused, not
/// guessed). `None` for lookbehind (`(?<=`, `(?<!`) too.
fn group_name(chars: &mut Peekable<Chars<'_>>) -> Option<String> {
    let mut name = String::new();
    loop {
        match chars.next()? {
            '>' if !name.is_empty() => return Some(name),
            c if c == '_' || c == '$' || c.is_ascii_alphabetic() => name.push(c),
            c if c.is_ascii_digit() && !name.is_empty() => name.push(c),
            _ => return None,
        }
    }
}

/// The code points one atom matches: those in `ranges` (inclusive, in any
/// order), or with `negated` those outside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    pub ranges: Vec<(u32, u32)>,
    pub negated: bool,
}

impl Atom {
    fn of_char(c: char) -> Atom {
        Atom {
            ranges: vec![(u32::from(c), u32::from(c))],
            negated: false,
        }
    }

    fn of_set(set: Set, negated: bool) -> Atom {
        Atom {
            ranges: set.to_vec(),
            negated,
        }
    }

    pub fn contains(&self, code: u32) -> bool {
        self.ranges
            .iter()
            .any(|&(low, high)| low <= code && code <= high)
            != self.negated
    }

    fn holds_terminator(&self) -> bool {
        LINE_TERMINATORS
            .iter()
            .any(|&t| self.contains(u32::from(t)))
    }
}

/// ECMA-262's LineTerminator: what `.` does not match and `^`/`$` see in
/// multiline mode.
const LINE_TERMINATORS: [char; 4] = ['\n', '\r', '\u{2028}', '\u{2029}'];

/// The line-wise lookahead form runs only with regex-lite (`std`).
fn is_line_terminator(c: char) -> bool {
    LINE_TERMINATORS.contains(&c)
}

/// The code points (up to U+10FFFF) outside ascending, disjoint `ranges`.
fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    let mut next = 0u32;
    for &(low, high) in ranges {
        if low > next {
            out.push((next, low - 1));
        }
        next = high.saturating_add(1);
    }
    if next <= 0x10_FFFF {
        out.push((next, 0x10_FFFF));
    }
    out
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
/// class escapes; the code points the class matches. An empty class is not
/// accepted.
fn push_class(chars: &mut Peekable<Chars<'_>>, out: &mut String) -> Option<Atom> {
    out.push('[');
    let negated = chars.peek() == Some(&'^');
    if negated {
        chars.next();
        out.push('^');
    }
    let mut empty = true;
    let mut items: Vec<(u32, u32)> = Vec::new();
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
                ClassAtom::Char(c) => {
                    items.push((u32::from(c), u32::from(c)));
                    push_char(out, c);
                }
                ClassAtom::Set(set, negated) => {
                    if negated {
                        items.extend(complement(set));
                    } else {
                        items.extend_from_slice(set);
                    }
                    push_set_items(out, set, negated);
                }
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
        items.push((u32::from(low), u32::from(high)));
        push_char(out, low);
        out.push('-');
        push_char(out, high);
    }
    out.push(']');
    Some(Atom {
        ranges: items,
        negated,
    })
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

/// How a pattern is decided in linear time: it matches a text when any
/// of its branches does (one per top-level alternative that needs its own
/// treatment, else one [`Branch::Search`] for the whole pattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Branch {
    /// One `regex-lite` search (the pattern as [`linear_syntax`] writes it).
    Search(String),
    /// `^(?=A)(?!B)…R`: each lookahead body anchored at the start of the
    /// text, then `^(?:R)`.
    AtStart {
        lookaheads: Vec<Lookahead>,
        rest: String,
    },
    /// `(?=.*X)(?=.*Y)…` (and an optional rest `.*Z`) without `^`: some
    /// line holds a match start of each `X`, `Y`, `Z`.
    SomeLine(Vec<Need>),
}

/// A lookahead `(?=A)` / `(?!A)` right after a leading `^`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookahead {
    /// `^(?:A)`.
    pub syntax: String,
    /// `(?=` rather than `(?!`.
    pub positive: bool,
    /// When `A` is `.*` and one atom: the atom's code points (`A` matches
    /// at the start when one of them comes before or at the first line
    /// terminator).
    pub first_line: Option<Atom>,
}

/// `X` of a lookahead `(?=.*X)` decided line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// `X` translated.
    pub syntax: String,
    /// When `X` is one atom: its code points.
    pub atom: Option<Atom>,
}

const INVALID: &str = "it is not a valid ECMA-262 regular expression (u flag), or uses syntax \
                       without a linear-time translation";
const LOOKAHEAD: &str = "lookahead (?=…) / (?!…) is supported only as a run right after a \
                         leading ^, or, without ^, as a run of (?=.*…) at the start";
const LOOKBEHIND: &str = "lookbehind (?<=…) / (?<!…) has no linear-time translation";
const BACKREFERENCE: &str = "backreferences (\\1, \\k<name>) cannot be matched in linear time";
const PROPERTY: &str = "Unicode property escapes (\\p{…}, \\P{…}) are not supported";
const MODIFIERS: &str = "modifier groups (?i:…) are not supported";
const TOO_BIG: &str = "it is too large for the linear-time engine (its size or nesting limit)";

/// The linear-time plan for `pattern`, or why there is none (the pattern
/// is then refused).
pub fn plan(pattern: &str) -> Result<Vec<Branch>, String> {
    if let Some(whole) = translate(pattern) {
        return Ok(vec![Branch::Search(whole.syntax)]);
    }
    let refused = || String::from(refusal(pattern));
    let alternatives = split_alternatives(pattern).ok_or_else(refused)?;
    if has_duplicate_names(pattern) {
        return Err(refused());
    }
    let mut branches = Vec::with_capacity(alternatives.len());
    for alternative in alternatives {
        let branch = match translate(alternative) {
            Some(plain) => Some(Branch::Search(plain.syntax)),
            None => lookahead_branch(alternative),
        };
        branches.push(branch.ok_or_else(refused)?);
    }
    Ok(branches)
}

/// An alternative that starts with a run of lookaheads: exact when it is
/// `^` and the run (the lookaheads are then decided at the text's start
/// only, independently of each other and of the rest, since nothing reads
/// captures), or, without `^`, a run of positive `(?=.*X)` and a rest that
/// is empty or `.*Z` (see [`Branch::SomeLine`] and `some_line`).
fn lookahead_branch(alternative: &str) -> Option<Branch> {
    let (anchored, mut rest) = match alternative.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, alternative),
    };
    let mut bodies = Vec::new();
    loop {
        let positive = if rest.starts_with("(?=") {
            true
        } else if rest.starts_with("(?!") {
            false
        } else {
            break;
        };
        let close = group_end(rest)?;
        bodies.push((rest.get(3..close)?, positive));
        rest = rest.get(close + 1..)?;
    }
    if bodies.is_empty() {
        return None;
    }
    if anchored {
        let at_start = |body: &str| Some(format!("^(?:{})", translate(body)?.syntax));
        let mut lookaheads = Vec::with_capacity(bodies.len());
        for (body, positive) in bodies {
            lookaheads.push(Lookahead {
                syntax: at_start(body)?,
                positive,
                first_line: dot_star(body)
                    .and_then(translate)
                    .filter(|t| t.terms == 1)
                    .and_then(|t| t.last_atom),
            });
        }
        // A quantifier right after a lookahead is a syntax error with the
        // `u` flag; the rest's translation refuses one at its start.
        return Some(Branch::AtStart {
            lookaheads,
            rest: at_start(rest)?,
        });
    }
    let mut needs = Vec::with_capacity(bodies.len() + 1);
    for (body, positive) in bodies {
        if !positive {
            return None;
        }
        needs.push(line_need(body)?);
    }
    if !rest.is_empty() {
        needs.push(line_need(rest)?);
    }
    Some(Branch::SomeLine(needs))
}

/// `X` of a body `.*X` (or `.*?X`), when `.*` is a term of its own.
fn dot_star(body: &str) -> Option<&str> {
    let tail = body.strip_prefix(".*")?;
    let tail = tail.strip_prefix('?').unwrap_or(tail);
    // `.*a|b` is `(?:.*a)|b`, not `.*(?:a|b)`.
    (split_alternatives(tail)?.len() == 1).then_some(tail)
}

/// `X` of a body `.*X` whose matches never reach past the line they start
/// on except by their one character: `X` is a single atom, or none of its
/// atoms matches a line terminator.
fn line_need(body: &str) -> Option<Need> {
    let t = translate(dot_star(body)?)?;
    let atom = t.last_atom.filter(|_| t.terms == 1);
    (!t.crosses_lines || atom.is_some()).then_some(Need {
        syntax: t.syntax,
        atom,
    })
}

/// Walks `pattern` outside escapes, calling `visit(byte offset, char,
/// group depth)` on every character outside classes; `None` when the
/// parentheses or brackets do not balance.
fn scan(pattern: &str, mut visit: impl FnMut(usize, char, usize) -> bool) -> Option<()> {
    let mut depth = 0usize;
    let mut in_class = false;
    let mut chars = pattern.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next()?;
            }
            ']' if in_class => in_class = false,
            _ if in_class => {}
            '[' => in_class = true,
            '(' => {
                if !visit(at, c, depth) {
                    return Some(());
                }
                depth += 1;
            }
            ')' => {
                depth = depth.checked_sub(1)?;
                if !visit(at, c, depth) {
                    return Some(());
                }
            }
            _ => {
                if !visit(at, c, depth) {
                    return Some(());
                }
            }
        }
    }
    (depth == 0 && !in_class).then_some(())
}

/// The top-level alternatives of `pattern`.
fn split_alternatives(pattern: &str) -> Option<Vec<&str>> {
    let mut bars = Vec::new();
    scan(pattern, |at, c, depth| {
        if c == '|' && depth == 0 {
            bars.push(at);
        }
        true
    })?;
    let mut parts = Vec::with_capacity(bars.len() + 1);
    let mut from = 0;
    for bar in bars {
        parts.push(pattern.get(from..bar)?);
        from = bar + 1;
    }
    parts.push(pattern.get(from..)?);
    Some(parts)
}

/// The byte offset of the `)` closing the group `text` starts with.
fn group_end(text: &str) -> Option<usize> {
    let mut end = None;
    // The scan stops at the close; the rest of `text` need not balance.
    let _ = scan(text, |at, c, depth| {
        if c == ')' && depth == 0 {
            end = Some(at);
            return false;
        }
        true
    });
    end
}

/// Whether two groups of `pattern` have one name (a syntax error).
fn has_duplicate_names(pattern: &str) -> bool {
    let mut names: Vec<&str> = Vec::new();
    let mut duplicate = false;
    let _ = scan(pattern, |at, c, _| {
        let name = pattern
            .get(at..)
            .filter(|_| c == '(')
            .and_then(|group| group.strip_prefix("(?<"))
            .filter(|rest| !rest.starts_with(['=', '!']))
            .and_then(|rest| rest.split_once('>'))
            .map(|(name, _)| name);
        if let Some(name) = name {
            duplicate |= names.contains(&name);
            names.push(name);
        }
        true
    });
    duplicate
}

/// Why `pattern` has no plan: the first construct without a linear-time
/// translation, else [`INVALID`].
fn refusal(pattern: &str) -> &'static str {
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('p' | 'P') => return PROPERTY,
                Some('k' | '1'..='9') => return BACKREFERENCE,
                _ => {}
            },
            ']' if in_class => in_class = false,
            '[' => in_class = true,
            '(' if !in_class && chars.peek() == Some(&'?') => {
                chars.next();
                match chars.next() {
                    Some('=' | '!') => return LOOKAHEAD,
                    Some('<') if matches!(chars.peek(), Some('=' | '!')) => return LOOKBEHIND,
                    Some(c) if c.is_ascii_alphabetic() || c == '-' => return MODIFIERS,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    INVALID
}

/// The `regex-lite` regex for `pattern`, when [`linear_syntax`] accepts it
/// and `regex-lite` compiles it within its size limits.
pub fn linear_regex(pattern: &str) -> Option<regex_lite::Regex> {
    regex_lite::Regex::new(&linear_syntax(pattern)?).ok()
}

/// An [`Atom`] as a lookup: ASCII by bit.
struct CharSet {
    ascii: u128,
    atom: Atom,
}

impl CharSet {
    fn new(atom: &Atom) -> CharSet {
        let ascii = (0..128u32)
            .filter(|&c| atom.contains(c))
            .fold(0u128, |bits, c| bits | 1 << c);
        CharSet {
            ascii,
            atom: atom.clone(),
        }
    }

    fn contains(&self, c: char) -> bool {
        let c = u32::from(c);
        if c < 128 {
            return self.ascii >> c & 1 == 1;
        }
        self.atom.contains(c)
    }
}

/// A lookahead body or line-wise need, compiled: one atom as a [`CharSet`]
/// (a scan of the characters, no regex), else a regex.
enum Test {
    Atom(CharSet),
    Regex(regex_lite::Regex),
}

/// A [`Branch`] compiled.
enum Compiled {
    Search(regex_lite::Regex),
    AtStart {
        lookaheads: Vec<(Test, bool)>,
        rest: regex_lite::Regex,
    },
    SomeLine(Vec<Test>),
}

fn compile(pattern: &str) -> Result<Vec<Compiled>, String> {
    let regex = |syntax: &str| regex_lite::Regex::new(syntax).map_err(|_| String::from(TOO_BIG));
    let test = |syntax: &str, atom: &Option<Atom>| match atom {
        Some(atom) => Ok(Test::Atom(CharSet::new(atom))),
        None => regex(syntax).map(Test::Regex),
    };
    let mut compiled = Vec::new();
    for branch in plan(pattern)? {
        compiled.push(match branch {
            Branch::Search(syntax) => Compiled::Search(regex(&syntax)?),
            Branch::AtStart { lookaheads, rest } => Compiled::AtStart {
                lookaheads: lookaheads
                    .iter()
                    .map(|l| Ok((test(&l.syntax, &l.first_line)?, l.positive)))
                    .collect::<Result<_, String>>()?,
                rest: regex(&rest)?,
            },
            Branch::SomeLine(needs) => Compiled::SomeLine(
                needs
                    .iter()
                    .map(|need| test(&need.syntax, &need.atom))
                    .collect::<Result<_, String>>()?,
            ),
        });
    }
    Ok(compiled)
}

fn run(branches: &[Compiled], text: &str) -> bool {
    branches.iter().any(|branch| match branch {
        Compiled::Search(re) => re.is_match(text),
        Compiled::AtStart { lookaheads, rest } => {
            lookaheads.iter().all(|(test, positive)| {
                let matched = match test {
                    Test::Atom(set) => first_line_holds(set, text),
                    Test::Regex(re) => re.is_match(text),
                };
                matched == *positive
            }) && rest.is_match(text)
        }
        Compiled::SomeLine(needs) => some_line(needs, text),
    })
}

/// `^(?=.*A)` for one atom `A`: a character of `set` before or at the
/// first line terminator.
fn first_line_holds(set: &CharSet, text: &str) -> bool {
    for c in text.chars() {
        if set.contains(c) {
            return true;
        }
        if is_line_terminator(c) {
            return false;
        }
    }
    false
}

/// `(?=.*X)(?=.*Y)…` searched in `text`: it matches at a position `p` when
/// each `X` has a match starting between `p` and the end of `p`'s line
/// (`.` stops at a line terminator; a match may start on the terminator
/// itself). Moving `p` back to its line's start only widens that range, so
/// some position matches exactly when some line start does, that is when
/// one line holds a match start of every `X`. A match of `X` that starts on
/// a line ends on it or takes just the terminator (what [`line_need`]
/// admits): a one-atom `X` is a scan of the characters, any other `X`
/// searches that each start on a line; each `X` costs one linear pass.
fn some_line(needs: &[Test], text: &str) -> bool {
    let atoms: Vec<&CharSet> = needs
        .iter()
        .filter_map(|need| match need {
            Test::Atom(set) => Some(set),
            Test::Regex(_) => None,
        })
        .collect();
    if atoms.len() == needs.len() {
        return some_line_of_atoms(&atoms, text);
    }
    if !text.contains(is_line_terminator) {
        return needs.iter().all(|need| match need {
            Test::Atom(set) => text.chars().any(|c| set.contains(c)),
            Test::Regex(re) => re.is_match(text),
        });
    }
    // The character scans first: the regex searches then start only on
    // the lines every atom holds on.
    let is_atom = |need: &&Test| matches!(need, Test::Atom(_));
    let ordered = needs
        .iter()
        .filter(is_atom)
        .chain(needs.iter().filter(|need| !is_atom(need)));
    let mut candidates: Option<Vec<usize>> = None;
    for need in ordered {
        let lines = match need {
            Test::Atom(set) => lines_with_atom(set, text),
            Test::Regex(re) => lines_with_match(re, text, candidates.as_deref()),
        };
        let kept = match candidates {
            None => lines,
            Some(previous) => intersection(&previous, &lines),
        };
        if kept.is_empty() {
            return false;
        }
        candidates = Some(kept);
    }
    true
}

/// [`some_line`] when every need is one atom: one pass over the characters.
fn some_line_of_atoms(atoms: &[&CharSet], text: &str) -> bool {
    // One bit per atom; more than 64 lookaheads take the list path.
    if atoms.is_empty() {
        return true;
    }
    if atoms.len() > 64 {
        return atoms
            .iter()
            .map(|set| lines_with_atom(set, text))
            .reduce(|kept, lines| intersection(&kept, &lines))
            .is_some_and(|kept| !kept.is_empty());
    }
    let all = u64::MAX >> (64 - atoms.len());
    let mut met = 0u64;
    for c in text.chars() {
        for (bit, set) in atoms.iter().enumerate() {
            if set.contains(c) {
                met |= 1 << bit;
            }
        }
        if met == all {
            return true;
        }
        if is_line_terminator(c) {
            met = 0;
        }
    }
    false
}

/// The indexes (ascending) of the lines holding a character of `set`; a
/// terminator belongs to the line it ends.
fn lines_with_atom(set: &CharSet, text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 0;
    for c in text.chars() {
        if set.contains(c) && lines.last() != Some(&line) {
            lines.push(line);
        }
        if is_line_terminator(c) {
            line += 1;
        }
    }
    lines
}

/// The indexes (ascending) of the lines holding a match start of `re`
/// (among the lines `only` lists, when given); a terminator belongs to the
/// line it ends. `re` matches no line terminator, so a match ends on the
/// line it starts on: the next search starts on the next wanted line, and
/// one search passes over every line without a match.
fn lines_with_match(re: &regex_lite::Regex, text: &str, only: Option<&[usize]>) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut wanted = only.map(|lines| lines.iter().copied().peekable());
    let (mut from, mut line) = (0, 0);
    loop {
        if let Some(wanted) = wanted.as_mut() {
            while wanted.next_if(|&w| w < line).is_some() {}
            let Some(&target) = wanted.peek() else {
                break;
            };
            while line < target {
                let Some((end, terminator)) = text
                    .get(from..)
                    .and_then(|rest| rest.char_indices().find(|&(_, c)| is_line_terminator(c)))
                else {
                    return lines;
                };
                from += end + terminator.len_utf8();
                line += 1;
            }
        }
        let Some(found) = re.find_at(text, from) else {
            break;
        };
        let at = found.start();
        line += text
            .get(from..at)
            .map_or(0, |skipped| skipped.matches(is_line_terminator).count());
        lines.push(line);
        let Some((end, terminator)) = text
            .get(at..)
            .and_then(|rest| rest.char_indices().find(|&(_, c)| is_line_terminator(c)))
        else {
            break;
        };
        from = at + end + terminator.len_utf8();
        line += 1;
    }
    lines
}

fn intersection(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut kept = Vec::new();
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        if x <= y {
            a.next();
        }
        if y <= x {
            b.next();
        }
        if x == y {
            kept.push(x);
        }
    }
    kept
}

/// `pattern` against `text` as the engine answers it: a match, or why the
/// pattern is refused.
pub fn is_match(pattern: &str, text: &str) -> Result<bool, String> {
    compile(pattern).map(|branches| run(&branches, text))
}
