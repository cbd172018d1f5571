//! `pattern` / `patternProperties` in time linear in the text, for every
//! pattern the page can register.
//!
//! JS `RegExp` backtracks: `^(a+)+$` against 30 `a`s and a `!` takes
//! seconds, doubling with each `a`. [`parse`] reads the ECMA-262 patterns
//! (`u` flag, no other flags) whose meaning it knows exactly into a tree
//! that [`nfa::Program`] searches in `O(m * n)` (program size times input
//! length) whatever the pattern; [`plan`] adds the lookahead forms it can
//! decide exactly with a fixed number of such searches; [`LinearPatterns`]
//! runs the plans and answers every other pattern with an error, which the
//! registry turns into a refusal at registration
//! (`schema_conversion_failed`). No pattern goes to a backtracking engine.
//!
//! Accepted, with their ECMA-262 (`u` flag) meaning:
//! literals; `.` (anything but `\n`, `\r`, U+2028, U+2029); `^` and `$`
//! (input start and end, no multiline); `\b` and `\B` (ASCII word
//! boundaries); `|`; `(…)`, `(?:…)` and `(?<name>…)` (all run as
//! non-capturing groups: nothing reads the captures; names are ASCII
//! identifiers, each used once); `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`,
//! each greedy or lazy; `[…]` and `[^…]` of characters, ranges and the
//! escapes below; `\d` `\D` `\w` `\W` (ASCII), `\s` `\S` (ECMA-262's
//! WhiteSpace and LineTerminator set); `\f` `\n` `\r` `\t` `\v`, `\0`,
//! `\cX`, `\xHH`, `\uHHHH` (a surrogate pair as one code point), `\u{H…}`;
//! `\` before a syntax character or `/`; in a class also `\b` (backspace)
//! and `\-`. Lookahead in two forms, per top-level alternative:
//! `^(?=A)(?!B)…R` (a run of lookaheads right after a leading `^`, bodies
//! and rest of the syntax above), and `(?=.*X)(?=.*Y)…` (positive
//! lookaheads whose bodies start with `.*`, optionally followed by `.*Z`,
//! where each `X` is one atom or matches no line terminator).
//! Unicode property escapes `\p{…}` and `\P{…}`, inside and outside
//! classes, when the matcher has a [`PropertyRanges`]: a property is a set
//! of code-point ranges like any class, enumerated by the host (the page's
//! own `RegExp` in the shipped module, so they mean what it means and the
//! module carries no Unicode tables), once per property.
//! Refused: lookbehind, backreferences, property escapes the host does not
//! know (all of them without a [`PropertyRanges`]), modifiers, lookahead
//! anywhere else, every syntax error, and patterns past the engine's size
//! or nesting limits (see [`nfa`]).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice
)]

pub mod nfa;

use super::PatternMatcher;
use crate::prelude::*;
use crate::vecmap::{heap_sort, VecMap};
use core::cell::RefCell;
use core::iter::Peekable;
use core::str::Chars;
use nfa::{Look, Node, Parsed, Program, Set};

/// Inclusive code point ranges, ascending and disjoint.
type Ranges = &'static [(u32, u32)];

const DIGIT: Ranges = &[(0x30, 0x39)];
const WORD: Ranges = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// ECMA-262 WhiteSpace (TAB, VT, FF, ZWNBSP, USP = Zs) and LineTerminator
/// (LF, CR, LS, PS).
const SPACE: Ranges = &[
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
const LINE_TERMINATOR: Ranges = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];

/// A parsed pattern and what the line-wise lookahead form needs to know
/// about it.
#[derive(Debug)]
struct Translation {
    parsed: Parsed,
    /// Atoms, assertions, quantifiers, parentheses and `|`s: 1 for a lone atom.
    terms: usize,
    /// Whether some atom can match a line terminator.
    crosses_lines: bool,
    /// The code points the last atom matches.
    last_atom: Option<Set>,
}

/// A group being read: its finished alternatives and the current one.
#[derive(Default)]
struct Frame {
    alternatives: Vec<Node>,
    sequence: Vec<Node>,
}

impl Frame {
    fn finish(mut self) -> Node {
        self.alternatives.push(Node::concat(self.sequence));
        Node::alternation(self.alternatives)
    }
}

/// `pattern` parsed, or `None` when it is not accepted (see the module
/// docs). Lookaround is never accepted here; [`plan`] takes the lookahead
/// forms it can decide exactly.
pub fn parse(pattern: &str) -> Option<Parsed> {
    parse_with(pattern, Properties::NONE)
}

/// [`parse`], with the property escapes `properties` knows.
fn parse_with(pattern: &str, properties: Properties<'_>) -> Option<Parsed> {
    translate(pattern, properties).map(|t| t.parsed)
}

fn translate(pattern: &str, properties: Properties<'_>) -> Option<Translation> {
    let mut chars = pattern.chars().peekable();
    let mut sets: Vec<Set> = Vec::new();
    let mut open: Vec<Frame> = Vec::new();
    let mut frame = Frame::default();
    let mut groups = 0;
    // Whether the previous term takes a quantifier (an atom, not an
    // assertion, `|`, `(` or a quantifier).
    let mut quantifiable = false;
    let mut terms = 0usize;
    let mut crosses_lines = false;
    let mut last_atom = None;
    let mut names: Vec<String> = Vec::new();
    while let Some(c) = chars.next() {
        terms += 1;
        let mut atom = None;
        let node = match c {
            '^' => Some(Node::Look(Look::Start)),
            '$' => Some(Node::Look(Look::End)),
            '|' => {
                let sequence = core::mem::take(&mut frame.sequence);
                frame.alternatives.push(Node::concat(sequence));
                None
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
                open.push(core::mem::take(&mut frame));
                groups = groups.max(open.len());
                None
            }
            ')' => {
                let depth = open.len();
                let inner = core::mem::replace(&mut frame, open.pop()?).finish();
                // Past the nesting limit the pattern is refused anyway: the
                // tree stays shallow (it is walked recursively).
                Some(match depth > nfa::NEST_LIMIT {
                    true => Node::Empty,
                    false => inner,
                })
            }
            '*' | '+' | '?' | '{' => {
                if !quantifiable {
                    return None;
                }
                let (min, max) = match c {
                    '*' => (0, None),
                    '+' => (1, None),
                    '?' => (0, Some(1)),
                    _ => bounds(&mut chars)?,
                };
                if chars.peek() == Some(&'?') {
                    chars.next();
                }
                let node = frame.sequence.pop()?;
                Some(Node::repeat(node, min, max))
            }
            '.' => {
                atom = Some(negate(LINE_TERMINATOR));
                None
            }
            '[' => {
                atom = Some(class(&mut chars, properties)?);
                None
            }
            '\\' => match chars.next()? {
                'b' => Some(Node::Look(Look::Word)),
                'B' => Some(Node::Look(Look::NotWord)),
                e => match class_escape(e, &mut chars, properties)? {
                    ClassAtom::Char(c) => {
                        atom = Some(vec![(u32::from(c), u32::from(c))]);
                        Some(Node::Char(u32::from(c)))
                    }
                    ClassAtom::Set(set) => {
                        atom = Some(set);
                        None
                    }
                },
            },
            // Lone `]`, `{` and `}` are syntax errors with the `u` flag.
            ']' | '}' => return None,
            c => {
                atom = Some(vec![(u32::from(c), u32::from(c))]);
                Some(Node::Char(u32::from(c)))
            }
        };
        let is_atom = atom.is_some() || c == ')';
        if let Some(ranges) = atom {
            let set = Set::new(ranges);
            crosses_lines |= LINE_TERMINATOR
                .iter()
                .any(|&(low, high)| (low..=high).any(|t| set.contains(t)));
            let node = node.unwrap_or(Node::Class(sets.len()));
            if matches!(node, Node::Class(_)) {
                sets.push(set.clone());
            }
            last_atom = Some(set);
            frame.sequence.push(node);
        } else if let Some(node) = node {
            frame.sequence.push(node);
        }
        quantifiable = is_atom;
    }
    if !open.is_empty() {
        return None;
    }
    Some(Translation {
        parsed: Parsed {
            node: frame.finish(),
            sets,
            groups,
        },
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

/// ECMA-262's LineTerminator: what `.` does not match and `^`/`$` see in
/// multiline mode.
const LINE_TERMINATORS: [char; 4] = ['\n', '\r', '\u{2028}', '\u{2029}'];

fn is_line_terminator(c: char) -> bool {
    LINE_TERMINATORS.contains(&c)
}

/// `ranges` sorted, overlapping and adjacent ones merged, empty ones and
/// ones past U+10FFFF dropped (so that the highs ascend, as
/// [`Set::contains`] needs).
fn canonical(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    heap_sort(&mut ranges);
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (low, high) in ranges {
        if low > high || high > 0x10_FFFF {
            continue;
        }
        match out.last_mut() {
            Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
            _ => out.push((low, high)),
        }
    }
    out
}

/// The code points (up to U+10FFFF) outside canonical `ranges`: the gaps
/// before, between and after them, skipping the surrogates at their ends
/// (the gap between ranges ending at U+D7FF and starting at U+E000 is then
/// `(0xE000, 0xD7FF)`, empty; it is kept, so that the size limit counts
/// the ranges `regex-lite` counts).
fn negate(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let next = |c: u32| if c == 0xD7FF { 0xE000 } else { c + 1 };
    let previous = |c: u32| if c == 0xE000 { 0xD7FF } else { c - 1 };
    let (Some(&(first, _)), Some(&(_, last))) = (ranges.first(), ranges.last()) else {
        return vec![(0, 0x10_FFFF)];
    };
    let mut out = Vec::with_capacity(ranges.len() + 1);
    if first > 0 {
        out.push((0, previous(first)));
    }
    for pair in ranges.windows(2) {
        if let [(_, high), (low, _)] = *pair {
            out.push((next(high), previous(low)));
        }
    }
    if last < 0x10_FFFF {
        out.push((next(last), 0x10_FFFF));
    }
    out
}

/// A named set, or its complement.
fn set_of(set: &[(u32, u32)], negated: bool) -> Vec<(u32, u32)> {
    match negated {
        true => negate(set),
        false => set.to_vec(),
    }
}

/// `{n}`, `{n,}` or `{n,m}` after the `{`, with n ≤ m checked.
fn bounds(chars: &mut Peekable<Chars<'_>>) -> Option<(u32, Option<u32>)> {
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
    Some((min, max))
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
    /// The code points of a class escape (`\d`, `\P{L}`, …).
    Set(Vec<(u32, u32)>),
}
/// The escape `\e…` (after the backslash) as a character or set, valid
/// both inside and outside a class; `None` for everything else.
fn class_escape(
    e: char,
    chars: &mut Peekable<Chars<'_>>,
    properties: Properties<'_>,
) -> Option<ClassAtom> {
    let c = match e {
        'd' | 'D' => return Some(ClassAtom::Set(set_of(DIGIT, e == 'D'))),
        'w' | 'W' => return Some(ClassAtom::Set(set_of(WORD, e == 'W'))),
        's' | 'S' => return Some(ClassAtom::Set(set_of(SPACE, e == 'S'))),
        'p' | 'P' => {
            let ranges = properties.ranges(&property_name(chars)?)?;
            return Some(ClassAtom::Set(set_of(&ranges, e == 'P')));
        }
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
fn class(chars: &mut Peekable<Chars<'_>>, properties: Properties<'_>) -> Option<Vec<(u32, u32)>> {
    let negated = chars.peek() == Some(&'^');
    if negated {
        chars.next();
    }
    let mut items: Vec<(u32, u32)> = Vec::new();
    // `[]` is refused; `[\P{Any}]` (no code point) is not.
    let mut empty = true;
    loop {
        let first = match chars.next()? {
            ']' if empty => return None,
            ']' => break,
            c => class_atom(c, chars, properties)?,
        };
        empty = false;
        let range = {
            let mut ahead = chars.clone();
            ahead.next() == Some('-') && ahead.peek().is_some_and(|&c| c != ']')
        };
        if !range {
            match first {
                ClassAtom::Char(c) => items.push((u32::from(c), u32::from(c))),
                ClassAtom::Set(set) => items.extend(set),
            }
            continue;
        }
        chars.next();
        let last = chars.next()?;
        let (ClassAtom::Char(low), ClassAtom::Char(high)) =
            (first, class_atom(last, chars, properties)?)
        else {
            // A range with a class escape at either end is a syntax error
            // with the `u` flag.
            return None;
        };
        if low > high {
            return None;
        }
        items.push((u32::from(low), u32::from(high)));
    }
    let items = canonical(items);
    Some(match negated {
        true => negate(&items),
        false => items,
    })
}

fn class_atom(
    c: char,
    chars: &mut Peekable<Chars<'_>>,
    properties: Properties<'_>,
) -> Option<ClassAtom> {
    if c != '\\' {
        return Some(ClassAtom::Char(c));
    }
    match chars.next()? {
        'b' => Some(ClassAtom::Char('\u{08}')),
        '-' => Some(ClassAtom::Char('-')),
        e => class_escape(e, chars, properties),
    }
}

/// How a pattern is decided in linear time: it matches a text when any
/// of its branches does (one per top-level alternative that needs its own
/// treatment, else one [`Branch::Search`] for the whole pattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Branch {
    /// One search (the pattern as [`parse`] reads it).
    Search(Parsed),
    /// `^(?=A)(?!B)…R`: each lookahead body anchored at the start of the
    /// text, then `R` anchored there too.
    AtStart {
        lookaheads: Vec<Lookahead>,
        rest: Parsed,
    },
    /// `(?=.*X)(?=.*Y)…` (and an optional rest `.*Z`) without `^`: some
    /// line holds a match start of each `X`, `Y`, `Z`.
    SomeLine(Vec<Need>),
}

/// A lookahead `(?=A)` / `(?!A)` right after a leading `^`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookahead {
    /// `A`, run anchored at the start.
    pub body: Parsed,
    /// `(?=` rather than `(?!`.
    pub positive: bool,
    /// When `A` is `.*` and one atom: the atom's code points (`A` matches
    /// at the start when one of them comes before or at the first line
    /// terminator).
    pub first_line: Option<Set>,
}

/// `X` of a lookahead `(?=.*X)` decided line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub body: Parsed,
    /// When `X` is one atom: its code points.
    pub atom: Option<Set>,
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
    plan_with(pattern, Properties::NONE)
}

/// [`plan`], with the property escapes `properties` knows.
fn plan_with(pattern: &str, properties: Properties<'_>) -> Result<Vec<Branch>, String> {
    if let Some(whole) = parse_with(pattern, properties) {
        return Ok(vec![Branch::Search(whole)]);
    }
    let refused = || refusal(pattern, properties);
    let alternatives = split_alternatives(pattern).ok_or_else(refused)?;
    if has_duplicate_names(pattern) {
        return Err(refused());
    }
    let mut branches = Vec::with_capacity(alternatives.len());
    for alternative in alternatives {
        let branch = match parse_with(alternative, properties) {
            Some(plain) => Some(Branch::Search(plain)),
            None => lookahead_branch(alternative, properties),
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
fn lookahead_branch(alternative: &str, properties: Properties<'_>) -> Option<Branch> {
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
        let mut lookaheads = Vec::with_capacity(bodies.len());
        for (body, positive) in bodies {
            lookaheads.push(Lookahead {
                body: parse_with(body, properties)?,
                positive,
                first_line: dot_star(body)
                    .and_then(|x| translate(x, properties))
                    .filter(|t| t.terms == 1)
                    .and_then(|t| t.last_atom),
            });
        }
        // A quantifier right after a lookahead is a syntax error with the
        // `u` flag; the rest's parse refuses one at its start.
        return Some(Branch::AtStart {
            lookaheads,
            rest: parse_with(rest, properties)?,
        });
    }
    let mut needs = Vec::with_capacity(bodies.len() + 1);
    for (body, positive) in bodies {
        if !positive {
            return None;
        }
        needs.push(line_need(body, properties)?);
    }
    if !rest.is_empty() {
        needs.push(line_need(rest, properties)?);
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
fn line_need(body: &str, properties: Properties<'_>) -> Option<Need> {
    let t = translate(dot_star(body)?, properties)?;
    let atom = t.last_atom.filter(|_| t.terms == 1);
    (!t.crosses_lines || atom.is_some()).then_some(Need {
        body: t.parsed,
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
fn refusal(pattern: &str, properties: Properties<'_>) -> String {
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        let why = match c {
            '\\' => match chars.next() {
                Some('p' | 'P') if properties.source.is_none() => PROPERTY,
                Some(p @ ('p' | 'P')) => match property_name(&mut chars) {
                    Some(name) if properties.ranges(&name).is_none() => {
                        let escape = if p == 'p' { "\\p" } else { "\\P" };
                        return format!(
                            "{escape}{{{name}}} is not a Unicode property this host's RegExp \
                             knows (u flag)"
                        );
                    }
                    Some(_) => continue,
                    None => INVALID,
                },
                Some('k' | '1'..='9') => BACKREFERENCE,
                _ => continue,
            },
            ']' if in_class => {
                in_class = false;
                continue;
            }
            '[' => {
                in_class = true;
                continue;
            }
            '(' if !in_class && chars.peek() == Some(&'?') => {
                chars.next();
                match chars.next() {
                    Some('=' | '!') => LOOKAHEAD,
                    Some('<') if matches!(chars.peek(), Some('=' | '!')) => LOOKBEHIND,
                    Some(c) if c.is_ascii_alphabetic() || c == '-' => MODIFIERS,
                    _ => continue,
                }
            }
            _ => continue,
        };
        return why.into();
    }
    INVALID.into()
}

/// A lookahead body or line-wise need, compiled: one atom as a [`Set`]
/// (a scan of the characters), else a program.
#[derive(Debug)]
enum Test {
    Atom(Set),
    Program(Program),
}

/// A [`Branch`] compiled.
#[derive(Debug)]
enum Compiled {
    Search(Program),
    AtStart {
        lookaheads: Vec<(Test, bool)>,
        rest: Program,
    },
    SomeLine(Vec<Test>),
}

fn compile(pattern: &str, properties: Properties<'_>) -> Result<Vec<Compiled>, String> {
    let program =
        |parsed: Parsed, at_start| Program::new(parsed, at_start).ok_or_else(|| TOO_BIG.into());
    let test = |parsed: Parsed, atom: Option<Set>, at_start| match atom {
        Some(atom) => Ok(Test::Atom(atom)),
        None => program(parsed, at_start).map(Test::Program),
    };
    let mut compiled = Vec::new();
    for branch in plan_with(pattern, properties)? {
        compiled.push(match branch {
            Branch::Search(parsed) => Compiled::Search(program(parsed, false)?),
            Branch::AtStart { lookaheads, rest } => Compiled::AtStart {
                lookaheads: lookaheads
                    .into_iter()
                    .map(|l| Ok((test(l.body, l.first_line, true)?, l.positive)))
                    .collect::<Result<_, String>>()?,
                rest: program(rest, true)?,
            },
            Branch::SomeLine(needs) => Compiled::SomeLine(
                needs
                    .into_iter()
                    .map(|need| test(need.body, need.atom, false))
                    .collect::<Result<_, String>>()?,
            ),
        });
    }
    Ok(compiled)
}

fn run(branches: &[Compiled], text: &str) -> bool {
    branches.iter().any(|branch| match branch {
        Compiled::Search(program) => program.is_match(text),
        Compiled::AtStart { lookaheads, rest } => {
            lookaheads.iter().all(|(test, positive)| {
                let matched = match test {
                    Test::Atom(set) => first_line_holds(set, text),
                    Test::Program(program) => program.is_match(text),
                };
                matched == *positive
            }) && rest.is_match(text)
        }
        Compiled::SomeLine(needs) => some_line(needs, text),
    })
}

/// `^(?=.*A)` for one atom `A`: a character of `set` before or at the
/// first line terminator.
fn first_line_holds(set: &Set, text: &str) -> bool {
    for c in text.chars() {
        if set.contains(u32::from(c)) {
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
/// admits): a one-atom `X` is a scan of the characters, any other `X` one
/// search whose matches each start and end on one line; each `X` costs one
/// linear pass.
fn some_line(needs: &[Test], text: &str) -> bool {
    let atoms: Vec<&Set> = needs
        .iter()
        .filter_map(|need| match need {
            Test::Atom(set) => Some(set),
            Test::Program(_) => None,
        })
        .collect();
    if atoms.len() == needs.len() && atoms.len() <= 64 {
        return some_line_of_atoms(&atoms, text);
    }
    let mut candidates: Option<Vec<usize>> = None;
    for need in needs {
        let lines = match need {
            Test::Atom(set) => lines_with_atom(set, text),
            Test::Program(program) => lines_with_match(program, text),
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

/// [`some_line`] when every need is one atom (at most 64): one pass over
/// the characters, one bit per atom.
fn some_line_of_atoms(atoms: &[&Set], text: &str) -> bool {
    if atoms.is_empty() {
        return true;
    }
    let all = u64::MAX >> (64 - atoms.len());
    let mut met = 0u64;
    for c in text.chars() {
        for (bit, set) in atoms.iter().enumerate() {
            if set.contains(u32::from(c)) {
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
fn lines_with_atom(set: &Set, text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 0;
    for c in text.chars() {
        if set.contains(u32::from(c)) && lines.last() != Some(&line) {
            lines.push(line);
        }
        if is_line_terminator(c) {
            line += 1;
        }
    }
    lines
}

/// The indexes (ascending) of the lines holding a match start of
/// `program`, which matches no line terminator: a match ends on the line
/// it starts on, so the line where it ends is the one; a position before a
/// terminator belongs to the line the terminator ends.
fn lines_with_match(program: &Program, text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let (mut counted, mut line) = (0, 0);
    program.search(text, |at| {
        line += text
            .get(counted..at)
            .map_or(0, |skipped| skipped.matches(is_line_terminator).count());
        counted = at;
        if lines.last() != Some(&line) {
            lines.push(line);
        }
        false
    });
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

/// Most distinct patterns kept compiled (tool schemas use a handful).
const CACHE_LIMIT: usize = 256;

/// A [`PatternMatcher`] that decides every pattern [`plan`] takes in time
/// linear in the text (searches of [`Program`]s, a fixed number per
/// pattern) and answers every other one `Err(why)`: the registry refuses
/// such a pattern at registration. Compiled patterns are cached.
#[derive(Default)]
pub struct LinearPatterns {
    cache: RefCell<VecMap<String, Result<Vec<Compiled>, String>>>,
    properties: Option<Box<dyn PropertyRanges>>,
    known: PropertyCache,
}

impl LinearPatterns {
    /// Refuses every property escape (`\p{…}`, `\P{…}`).
    pub fn new() -> LinearPatterns {
        LinearPatterns::default()
    }

    /// Takes the property escapes `properties` enumerates.
    pub fn with_properties(properties: Box<dyn PropertyRanges>) -> LinearPatterns {
        LinearPatterns {
            properties: Some(properties),
            ..LinearPatterns::default()
        }
    }

    fn compile(&self, pattern: &str) -> Result<Vec<Compiled>, String> {
        let properties = Properties {
            source: self.properties.as_deref().map(|p| (p, &self.known)),
        };
        compile(pattern, properties)
    }
}

/// The code points of Unicode properties, as the host's `RegExp` (`u`
/// flag) has them. Injected, so that the module carries no Unicode tables
/// and means what the page's own `RegExp` means: in the shipped module the
/// page's `RegExp` enumerates each property once (js/src/unicode-property.js).
pub trait PropertyRanges {
    /// The code points `\p{property}` matches, as inclusive ranges in any
    /// order; `property` is the text between the braces (`L`,
    /// `Script=Greek`, `White_Space`: ASCII letters, digits, `_` and at most
    /// one `=`). `None` when the host knows no such property.
    fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>>;
}

/// Each property's ranges (canonical), or `None` when unknown.
type PropertyCache = RefCell<VecMap<String, Option<Vec<(u32, u32)>>>>;

/// Most distinct properties kept (an enumeration costs milliseconds).
const PROPERTY_LIMIT: usize = 64;

/// The property escapes a parse may read: none (each is refused), or what a
/// [`PropertyRanges`] enumerates, cached per property.
#[derive(Clone, Copy)]
struct Properties<'a> {
    source: Option<(&'a dyn PropertyRanges, &'a PropertyCache)>,
}

impl Properties<'_> {
    const NONE: Properties<'static> = Properties { source: None };

    fn ranges(self, property: &str) -> Option<Vec<(u32, u32)>> {
        let (provider, cache) = self.source?;
        let fetch = || provider.ranges(property).map(canonical);
        let Ok(mut cache) = cache.try_borrow_mut() else {
            return fetch();
        };
        cache
            .cached(property, PROPERTY_LIMIT, fetch)
            .cloned()
            .flatten()
    }
}

/// After `\p` or `\P`: `{…}` through the `}`, its text (what ECMA-262
/// allows there: ASCII letters, digits, `_`, at most one `=`; the host
/// decides which names exist).
fn property_name(chars: &mut Peekable<Chars<'_>>) -> Option<String> {
    if chars.next()? != '{' {
        return None;
    }
    let mut name = String::new();
    // Where the `=` is, when there is one.
    let mut equals = None;
    loop {
        match chars.next()? {
            '}' if !name.is_empty() && equals != Some(name.len() - 1) => return Some(name),
            '=' if !name.is_empty() && equals.is_none() => {
                equals = Some(name.len());
                name.push('=');
            }
            c if (c.is_ascii_alphanumeric() || c == '_') && name.len() < 100 => name.push(c),
            _ => return None,
        }
    }
}

/// The states a match of `branches` visits per text character at most
/// (an atom's scan, one).
fn work(branches: &[Compiled]) -> usize {
    let test = |test: &Test| match test {
        Test::Atom(_) => 1,
        Test::Program(program) => program.work,
    };
    branches
        .iter()
        .map(|branch| match branch {
            Compiled::Search(program) => program.work,
            Compiled::AtStart { lookaheads, rest } => lookaheads
                .iter()
                .map(|(t, _)| test(t))
                .fold(rest.work, usize::saturating_add),
            Compiled::SomeLine(needs) => needs.iter().map(test).fold(0, usize::saturating_add),
        })
        .fold(0, usize::saturating_add)
}

impl PatternMatcher for LinearPatterns {
    fn work_per_byte(&self, pattern: &str) -> usize {
        let Ok(mut cache) = self.cache.try_borrow_mut() else {
            return self.compile(pattern).map_or(0, |branches| work(&branches));
        };
        match cache.cached(pattern, CACHE_LIMIT, || self.compile(pattern)) {
            Some(Ok(branches)) => work(branches),
            Some(Err(_)) => 0,
            None => self.compile(pattern).map_or(0, |branches| work(&branches)),
        }
    }

    fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let Ok(mut cache) = self.cache.try_borrow_mut() else {
            return self.compile(pattern).map(|branches| run(&branches, text));
        };
        match cache.cached(pattern, CACHE_LIMIT, || self.compile(pattern)) {
            Some(Ok(branches)) => Ok(run(branches, text)),
            Some(Err(why)) => Err(why.clone()),
            None => self.compile(pattern).map(|branches| run(&branches, text)),
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "../../tests/support/regex_properties.rs"]
mod regex_properties;

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::regex_properties;
    use super::*;

    /// A seeded xorshift: `next(n)` picks a number below `n`.
    fn picker(seed: u32) -> impl FnMut(usize) -> usize {
        let mut state = seed;
        move |n| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize % n
        }
    }

    fn linear() -> LinearPatterns {
        LinearPatterns::new()
    }

    fn matches(pattern: &str, text: &str) -> bool {
        match linear().is_match(pattern, text) {
            Ok(matched) => matched,
            Err(e) => panic!("{pattern:?} was refused: {e}"),
        }
    }

    fn refused(pattern: &str) -> String {
        match linear().is_match(pattern, "") {
            Err(why) => why,
            Ok(_) => panic!("{pattern:?} was accepted"),
        }
    }

    /// The pattern as one program, when it has one within the limits.
    fn program(pattern: &str) -> Option<Program> {
        Program::new(parse(pattern)?, false)
    }

    #[test]
    fn catastrophic_backtracking_patterns_run_in_linear_time() {
        let m = linear();
        for pattern in [
            "^(a+)+$",
            "^(a|a)*$",
            "^(a*)*b$",
            "^([a-z]+\\s?)+$",
            "(\\w+\\d*)+x",
        ] {
            assert!(program(pattern).is_some(), "{pattern}");
        }
        let hostile = format!("{}!", "a".repeat(40));
        assert_eq!(m.is_match("^(a+)+$", &hostile), Ok(false));
        assert_eq!(m.is_match("^(a+)+$", &"a".repeat(40)), Ok(true));
        assert_eq!(m.is_match("^(a*)*b$", &hostile), Ok(false));
    }

    #[test]
    fn what_has_no_linear_plan_is_refused() {
        let m = linear();
        for pattern in [
            // Lookaround outside the two forms, backreferences, property
            // escapes, modifiers.
            "(?=a)",
            "(?!a)",
            "a(?=b)",
            "^a(?=b)",
            "(?=.*a)b",
            "(?!.*a)",
            "^(?=a)*",
            "^(?=(?=a))",
            "(?<=a)b",
            "(?<!a)b",
            "(a)\\1",
            "(?<n>a)\\k<n>",
            "(?<n>a)(?<n>b)",
            "(?<n>a)|(?<n>b)",
            "(?<n>a)|^(?=b)(?<n>c)",
            "(?<é>a)",
            "(?<1a>a)",
            "(?<>a)",
            "\\p{L}",
            "\\P{L}",
            "[\\p{L}]",
            "(?i:a)",
            // Syntax errors with the `u` flag.
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
            "^(?=a",
            "^(?=a))",
            "(?=.*a)|(",
        ] {
            assert!(m.is_match(pattern, "").is_err(), "{pattern}");
        }
        // The highest code point, and a range of one character.
        assert_eq!(m.is_match("^[a-a]$", "a"), Ok(true));
        assert_eq!(m.is_match("^\\u{10FFFF}$", "\u{10FFFF}"), Ok(true));
    }

    #[test]
    fn a_refusal_says_why() {
        for (pattern, why) in [
            ("^(\\p{L}+\\s?)+$", PROPERTY),
            ("(?<=\\$)\\d+", LOOKBEHIND),
            ("(?<!a)b", LOOKBEHIND),
            ("(a)\\1", BACKREFERENCE),
            ("(?<n>a)\\k<n>", BACKREFERENCE),
            ("a(?=b)", LOOKAHEAD),
            ("(?!.*x)", LOOKAHEAD),
            ("(?i:a)", MODIFIERS),
            ("a**", INVALID),
            ("[\\p{L}", PROPERTY),
        ] {
            assert_eq!(refused(pattern), why, "{pattern}");
        }
        assert_eq!(refused("(a{1000}){1000}"), TOO_BIG);
        assert_eq!(
            linear().is_match("(a{1000}){1000}", "a"),
            Err(TOO_BIG.into()),
            "a cached refusal stays a refusal"
        );
    }

    #[test]
    fn named_groups_are_groups() {
        assert_eq!(
            parse("^(?<year>\\d{4})-(?<m_1$>a|b)$"),
            parse("^(?:\\d{4})-(?:a|b)$")
        );
        assert!(matches("^(?<year>\\d{4})-(?<month>\\d{2})$", "2026-12"));
        assert!(!matches("^(?<year>\\d{4})-(?<month>\\d{2})$", "2026-1"));
        assert!(matches("^(?<a>x)(?:(?<b>y)|z)+$", "xyzy"));
        assert!(matches("^(?<a>x)|(?<b>y)$", "y"));
    }

    /// The password form: each lookahead decided at the start, then the rest.
    #[test]
    fn lookaheads_after_a_leading_caret() {
        let pattern = "^(?=.*[A-Z])(?=.*\\d)(?!.*\\s).{8,}$";
        let parsed = |body: &str| parse(body).unwrap_or_else(|| panic!("{body}"));
        assert_eq!(
            plan(pattern),
            Ok(vec![Branch::AtStart {
                lookaheads: vec![
                    Lookahead {
                        body: parsed(".*[A-Z]"),
                        positive: true,
                        first_line: Some(Set::new(vec![(0x41, 0x5A)])),
                    },
                    Lookahead {
                        body: parsed(".*\\d"),
                        positive: true,
                        first_line: Some(Set::new(DIGIT.to_vec())),
                    },
                    Lookahead {
                        body: parsed(".*\\s"),
                        positive: false,
                        first_line: Some(Set::new(SPACE.to_vec())),
                    },
                ],
                rest: parsed(".{8,}$"),
            }])
        );
        let reference = |text: &str| {
            let line: Vec<char> = text.chars().collect();
            !line.iter().any(|&c| is_line_terminator(c))
                && line.len() >= 8
                && !line.iter().any(|&c| ecma_space(c))
                && line.iter().any(char::is_ascii_uppercase)
                && line.iter().any(char::is_ascii_digit)
        };
        for text in [
            "",
            "Abcdefg1",
            "abcdefg1",
            "ABCDEFGH",
            "Abcdefg",
            "Abcdef 1",
            "Abcdefg\n1",
            "1234567A",
            "A1éééééé",
            "A1\u{2028}345678",
            "Aaaaaaa1\n",
            "🐲🐲🐲🐲🐲🐲A1",
        ] {
            assert_eq!(matches(pattern, text), reference(text), "{text:?}");
        }
        // Each body is anchored at the start, not searched.
        assert!(matches("^(?=a)", "ab"));
        assert!(!matches("^(?=b)", "ab"));
        assert!(matches("^(?!b)a", "ab"));
        assert!(!matches("^(?!a)", "ab"));
        // `$` in a body is the end of the text; the rest is anchored too.
        assert!(matches("^(?=.*c$)ab", "abc"));
        assert!(!matches("^(?=.*c$)b", "abc"));
        // An empty rest, and alternatives around the form.
        assert!(matches("^(?=.*\\d)", "x1"));
        assert!(matches("^(?=x)y|z", "az"));
        assert!(!matches("^(?=x)y|z", "ay"));
        assert!(matches("q|^(?!x)(?<n>y)", "yq"));
        assert!(!matches("^(?!.*\\.\\.)[a-z.]+$", "a..b"));
        assert!(matches("^(?!.*\\.\\.)[a-z.]+$", "a.b.c"));
    }

    /// `(?=.*X)…` without `^`, decided line by line, against its
    /// definition: some position where every `.*X` matches.
    #[test]
    fn unanchored_lookaheads_hold_on_some_line() {
        let patterns = [
            "(?=.*[A-Z])(?=.*\\d)",
            "(?=.*[A-Z])(?=.*?\\d).*x",
            "(?=.*[^A-Za-z0-9])(?=.*a)",
            "(?=.*\\s)(?=.*b)",
            "(?=.*\\W)(?=.*\\d)",
            "(?=.*a.)(?=.*\\bc)",
            "(?=.*a$)(?=.*b)",
            "(?=.*^b)(?=.*a)",
            "(?=.*(?:ab|c))(?=.*)",
            "(?=.*\\u2028)(?=.*a)",
            "(?=.*a*b)(?=.*c)",
            "(?=.*b)(?=.*a.)",
            "(?=.*1)(?=.*[ab]c)(?=.*\\s)",
            "(?=.*\\B)(?=.*(?:a|))",
            "(?=.*$)(?=.*\\s)",
            "(?=.*^)(?=.*1)",
            "(?=.*\\b)(?=.*(?:)).*",
        ];
        let alphabet = [
            'a', 'b', 'c', 'A', '1', ' ', '!', '\n', '\r', '\u{2028}', 'é', 'x',
        ];
        let mut next = picker(0x2545_F491_u32);
        for pattern in patterns {
            let Ok(branches) = plan(pattern) else {
                panic!("{pattern} refused")
            };
            let [Branch::SomeLine(needs)] = branches.as_slice() else {
                panic!("{pattern}: {branches:?}")
            };
            let programs: Vec<Program> = needs
                .iter()
                .map(|x| Program::new(x.body.clone(), false).unwrap_or_else(|| panic!("{x:?}")))
                .collect();
            // The same needs with every atom that matches no line
            // terminator run as a program (what a search may be given): the
            // character scans must agree with the searches.
            let as_programs: Vec<Test> = needs
                .iter()
                .map(|x| match &x.atom {
                    Some(set) if LINE_TERMINATORS.iter().any(|&t| set.contains(u32::from(t))) => {
                        Test::Atom(set.clone())
                    }
                    _ => Test::Program(
                        Program::new(x.body.clone(), false).unwrap_or_else(|| panic!("{x:?}")),
                    ),
                })
                .collect();
            // `.*X` matches at `p` when `X` matches from some `q` at or
            // after `p` with no line terminator between them.
            let definition = |text: &str| {
                let positions: Vec<usize> = (0..=text.len())
                    .filter(|&p| text.is_char_boundary(p))
                    .collect();
                positions.iter().any(|&p| {
                    programs.iter().all(|x| {
                        positions.iter().any(|&q| {
                            q >= p
                                && !text
                                    .get(p..q)
                                    .is_some_and(|s| s.contains(is_line_terminator))
                                && x.matches_at(text, q)
                        })
                    })
                })
            };
            let mut agreed = [0; 2];
            for _ in 0..3000 {
                let text: String = (0..next(13))
                    .map(|_| alphabet[next(alphabet.len())])
                    .collect();
                let want = definition(&text);
                assert_eq!(matches(pattern, &text), want, "{pattern} on {text:?}");
                assert_eq!(
                    some_line(&as_programs, &text),
                    want,
                    "{pattern} on {text:?}"
                );
                agreed[usize::from(want)] += 1;
            }
            assert!(agreed[0] > 30 && agreed[1] > 30, "{pattern}: {agreed:?}");
        }
        // The issue's hostile case: linear, one pass per lookahead.
        let long = "a".repeat(200_000);
        assert!(!matches("(?=.*[A-Z])(?=.*\\d)", &long));
        assert!(matches("(?=.*[A-Z])(?=.*\\d)", &format!("{long}A1")));
        assert!(!matches(
            "(?=.*[A-Z])(?=.*\\d)",
            &format!("{}\n1", "A".repeat(100_000))
        ));
        let lines = "a\n".repeat(100_000);
        assert!(!matches("(?=.*\\s)(?=.*[A-Z])", &lines));
        assert!(matches("(?=.*\\s)(?=.*[A-Z])", &format!("{lines}A ")));
    }

    /// `^(?=.*A)` for one atom: the character scan against the regex.
    #[test]
    fn a_first_line_scan_agrees_with_its_program() {
        let alphabet = ['a', 'Z', '1', ' ', '\n', '\r', '\u{2028}', 'é', '!', '\t'];
        let mut next = picker(0x1234_5678_u32);
        for body in [
            ".*[A-Z]", ".*?\\d", ".*\\s", ".*[^a-z]", ".*\\W", ".*é", ".*\\n",
        ] {
            let Ok(branches) = plan(&format!("^(?={body})")) else {
                panic!("{body}")
            };
            let [Branch::AtStart { lookaheads, .. }] = branches.as_slice() else {
                panic!("{body}: {branches:?}")
            };
            let [Lookahead {
                body: parsed,
                first_line: Some(set),
                ..
            }] = lookaheads.as_slice()
            else {
                panic!("{body}: {lookaheads:?}")
            };
            let re = Program::new(parsed.clone(), true).unwrap_or_else(|| panic!("{body}"));
            for _ in 0..2000 {
                let text: String = (0..next(8))
                    .map(|_| alphabet[next(alphabet.len())])
                    .collect();
                assert_eq!(
                    first_line_holds(set, &text),
                    re.is_match(&text),
                    "{body} {text:?}"
                );
            }
        }
    }

    #[test]
    fn unanchored_lookaheads_whose_matches_cross_lines_are_refused() {
        for pattern in [
            "(?=.*a\\sb)",
            "(?=.*[^a]b)",
            "(?=.*\\s+)",
            "(?=.*a|b)",
            "(?=[^A-Z]*[A-Z])",
            "(?=.*a)b",
            "(?=.*a)(?!.*b)",
        ] {
            assert_eq!(refused(pattern), LOOKAHEAD, "{pattern}");
        }
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
            let re = program(pattern).unwrap_or_else(|| panic!("{pattern}"));
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
        let node = |pattern: &str| parse(pattern).map(|p| p.node);
        assert_eq!(parse("^(a+)+$"), parse("^(?:a+)+$"));
        assert_eq!(parse("(?:a|b){2,}?"), parse("(?:a|b){2,}"));
        assert_eq!(parse("a{3,3}"), parse("a{3}"));
        assert_eq!(node("(?:ab){1}"), node("ab"));
        assert_eq!(parse("a{0}").map(|p| p.node), Some(Node::Empty));
        let sets = |pattern: &str| parse(pattern).map(|p| p.sets);
        assert_eq!(
            sets("\\d."),
            Some(vec![
                Set::new(DIGIT.to_vec()),
                Set::new(vec![(0, 9), (0xB, 0xC), (0xE, 0x2027), (0x202A, 0x10_FFFF)]),
            ])
        );
        assert_eq!(sets("[^\\W]"), Some(vec![Set::new(WORD.to_vec())]));
        assert_eq!(sets("[.-]"), Some(vec![Set::new(vec![(0x2D, 0x2E)])]));
        assert_eq!(sets("[\\s\\S]"), Some(vec![Set::new(vec![(0, 0x10_FFFF)])]));
        assert_eq!(sets("[^\\s\\S]"), Some(vec![Set::new(vec![])]));
        assert_eq!(
            sets("[^\\uD7FF\\uE000]"),
            Some(vec![Set::new(vec![
                (0, 0xD7FE),
                (0xE000, 0xD7FF),
                (0xE001, 0x10_FFFF)
            ])])
        );
        assert!(!matches("[^\\s\\S]", "a"));
        assert!(matches("^[^\\uD7FF\\uE000]$", "\u{D7FE}"));
        assert!(!matches("^[^\\uD7FF\\uE000]$", "\u{E000}"));
    }

    /// Groups nest at most 50 deep (51 inside a lookahead at the start,
    /// run as `^(?:…)`), the tree at most 50 levels, and the states take
    /// at most 10 MiB as counted for the target.
    #[test]
    fn the_limits() {
        let nested = |depth: usize| format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
        assert!(program(&nested(50)).is_some());
        // At the limit the innermost group still matches what it says.
        assert!(matches(&nested(50), "a") && !matches(&nested(50), "b"));
        assert_eq!(refused(&nested(51)), TOO_BIG);
        assert_eq!(refused(&nested(100_000)), TOO_BIG);
        assert!(matches(&format!("^(?={})", nested(49)), "a"));
        assert_eq!(refused(&format!("^(?={})", nested(50))), TOO_BIG);
        // Each `(?:a|b)` is one alternation and one concatenation deeper.
        let deep = |depth: usize| format!("{}c{}", "(?:a|b".repeat(depth), ")".repeat(depth));
        assert!(program(&deep(25)).is_some());
        assert!(program(&deep(26)).is_none());
        assert!(program("a{100000}").is_some());
        assert!(program("(a{1000}){1000}").is_none());
        assert!(program("\\w{1000}").is_some());
        assert!(matches("^a{3}b{2,}$", "aaabb"));
        assert!(!matches("^a{3}b{2,}$", "aabbb"));
        assert!(matches("^(?:a?){40}a{40}$", &"a".repeat(40)));
    }

    #[test]
    fn match_starts_and_line_lists() {
        let Some(p) = program("b|^a") else {
            panic!("b|^a")
        };
        assert!(p.matches_at("ab", 0) && p.matches_at("ab", 1));
        assert!(!p.matches_at("ba", 1));
        let Some(word) = program("\\bx") else {
            panic!("\\bx")
        };
        assert!(!word.matches_at("ax", 1));
        assert!(word.matches_at("-x", 1));
        let Some(b) = program("b|$") else {
            panic!("b|$")
        };
        assert_eq!(lines_with_match(&b, "ab\nc\nb\n"), vec![0, 2, 3]);
        assert_eq!(intersection(&[0, 2, 5], &[1, 2, 5, 6]), vec![2, 5]);
    }

    #[test]
    fn more_lookaheads_than_a_word_has_bits_are_each_met_on_one_line() {
        for count in [64, 65] {
            let chars: Vec<char> = (0x4E00..0x4E00 + count)
                .filter_map(char::from_u32)
                .collect();
            let pattern: String = chars.iter().map(|c| format!("(?=.*{c})")).collect();
            let (head, tail) = chars.split_at(chars.len() / 2);
            let (head, tail): (String, String) = (head.iter().collect(), tail.iter().collect());
            assert!(matches(&pattern, &format!("x\n{tail}{head}")), "{count}");
            assert!(!matches(&pattern, &format!("{head}\n{tail}")), "{count}");
            let one_missing: String = chars.iter().skip(1).collect();
            assert!(!matches(&pattern, &one_missing), "{count}");
        }
    }

    #[test]
    fn a_sets_ranges_are_sorted_merged_and_within_unicode() {
        let ranges = vec![
            (0x61, 0x63),
            (5, 3),
            (0x10_FFFF, 0x11_0000),
            (0x20, 0x30),
            (0x31, 0x40),
            (0x62, 0x70),
        ];
        assert_eq!(canonical(ranges), vec![(0x20, 0x40), (0x61, 0x70)]);
    }

    #[test]
    fn alternatives_split_at_top_level_bars_outside_escapes_and_classes() {
        assert_eq!(split_alternatives("a|(b|c)"), Some(vec!["a", "(b|c)"]));
        assert_eq!(split_alternatives("a\\|b|c"), Some(vec!["a\\|b", "c"]));
        assert_eq!(split_alternatives("[|]|c"), Some(vec!["[|]", "c"]));
        assert_eq!(split_alternatives("[(]|c"), Some(vec!["[(]", "c"]));
        assert_eq!(split_alternatives("[\\]|]|c"), Some(vec!["[\\]|]", "c"]));
        for unbalanced in ["(a|b", "a)|b", "[a|b", "a\\"] {
            assert_eq!(split_alternatives(unbalanced), None, "{unbalanced}");
        }
        assert_eq!(group_end("(a[)]b)c"), Some(6));
        assert_eq!(group_end("(a\\)b)c"), Some(5));
    }

    #[test]
    fn a_search_starts_only_at_the_start_when_every_match_does() {
        for (pattern, anchored) in [
            ("^a", true),
            ("^a|^b", true),
            ("^(?:a|b)c", true),
            ("(?:^a)+b", true),
            ("(?:^a){2,3}b", true),
            ("a", false),
            ("a^", false),
            ("^a|b", false),
            ("(?:^a)*b", false),
            ("(?:^a)?b", false),
            ("(?:^a){0,2}b", false),
        ] {
            let Some(p) = program(pattern) else {
                panic!("{pattern}")
            };
            assert_eq!(p.is_anchored(), anchored, "{pattern}");
        }
        // A repetition that may be skipped leaves the rest free to match anywhere.
        for pattern in ["(?:^a)*b", "(?:^a)?b", "(?:^a){0,2}b", "^a|b"] {
            assert!(matches(pattern, "xb"), "{pattern}");
        }
        assert!(!matches("^a|^b", "xa"));
        assert!(!matches("(?:^a)+b", "xab"));
    }

    /// The `regex` crate's tables as the host (natively, no `RegExp`),
    /// counting its enumerations.
    #[derive(Default)]
    struct Host {
        asked: core::cell::Cell<usize>,
    }

    impl PropertyRanges for Host {
        fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>> {
            self.asked.set(self.asked.get() + 1);
            regex_properties::property_ranges(property)
        }
    }

    impl PropertyRanges for alloc::rc::Rc<Host> {
        fn ranges(&self, property: &str) -> Option<Vec<(u32, u32)>> {
            Host::ranges(self, property)
        }
    }

    fn with_host() -> LinearPatterns {
        LinearPatterns::with_properties(Box::new(Host::default()))
    }

    #[test]
    fn property_escapes_run_in_linear_time() {
        let m = with_host();
        let hostile = format!("{}!", "é".repeat(100_000));
        assert_eq!(m.is_match("^(\\p{L}+\\s?)+$", &hostile), Ok(false));
        assert!(m.work_per_byte("^(\\p{L}+\\s?)+$") < 20);
    }

    #[test]
    fn each_property_is_enumerated_once() {
        let host = alloc::rc::Rc::new(Host::default());
        let m = LinearPatterns::with_properties(Box::new(host.clone()));
        for pattern in [
            "\\p{L}",
            "^\\P{L}+$",
            "[\\p{L}a]",
            "\\p{Lu}",
            "\\p{Nope}",
            "\\p{Nope}a",
        ] {
            let _ = m.is_match(pattern, "x");
        }
        assert_eq!(host.asked.get(), 3, "L, Lu and Nope");
    }

    #[test]
    fn unknown_or_malformed_property_escapes_are_refused() {
        let m = with_host();
        let refused = |pattern: &str| match m.is_match(pattern, "") {
            Err(why) => why,
            Ok(_) => panic!("{pattern:?} was accepted"),
        };
        assert_eq!(
            refused("^\\p{Nope}+$"),
            "\\p{Nope} is not a Unicode property this host's RegExp knows (u flag)"
        );
        assert_eq!(
            refused("^[\\P{sc=Nope}](?=.*a)"),
            "\\P{sc=Nope} is not a Unicode property this host's RegExp knows (u flag)"
        );
        for pattern in [
            "\\p",
            "\\pL",
            "\\p{}",
            "\\p{L",
            "\\p{=L}",
            "\\p{gc=}",
            "\\p{gc=L=L}",
            "\\p{ L}",
            "\\p{L}{",
            "[\\p{L}-z]",
            "[a-\\p{L}]",
            "\\p{L}**",
        ] {
            assert_eq!(refused(pattern), INVALID, "{pattern}");
        }
        // A name is at most 100 characters.
        let long = "a".repeat(100);
        assert_eq!(
            refused(&format!("\\p{{{long}}}")),
            format!("\\p{{{long}}} is not a Unicode property this host's RegExp knows (u flag)")
        );
        assert_eq!(refused(&format!("\\p{{{long}a}}")), INVALID);
        // Known properties let the refusal name what else is wrong.
        assert_eq!(refused("(?<=\\p{L})a"), LOOKBEHIND);
        assert_eq!(refused("\\p{L}(?i:a)"), MODIFIERS);
        // Without a host every property escape is refused, as before.
        assert_eq!(linear().is_match("\\p{L}", ""), Err(PROPERTY.into()));
    }
}
