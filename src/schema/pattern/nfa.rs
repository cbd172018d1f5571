//! A parsed pattern compiled into a Thompson NFA and searched by simulating
//! all its states at once (a Pike VM without captures): each text position
//! visits each state at most once, so a search is `O(states * text)`
//! whatever the pattern.
//!
//! The parsed form keeps the shapes of `regex-lite`'s HIR and the compiler
//! builds its states the same way, with the same limits: groups nested at
//! most [`NEST_LIMIT`] deep, the tree at most as deep, and the states'
//! memory (counted as `regex-lite` counts its own) at most `SIZE_LIMIT`.
//! The limits bound the work per text character of every pattern taken,
//! and the validator's charge per match (`eval.rs`) is sized against them.

use crate::prelude::*;
use core::mem::size_of;

/// Deepest group nesting, and deepest tree.
pub const NEST_LIMIT: usize = 50;
/// Most memory the states may take, in bytes.
const SIZE_LIMIT: usize = 10 << 20;
/// One state's size, and one capture name's (the whole match's, counted
/// once), as `regex-lite` counts them on 32-bit and 64-bit targets.
const STATE_BYTES: usize = if size_of::<usize>() == 4 { 20 } else { 32 };
const NAME_BYTES: usize = 2 * size_of::<usize>();

/// A zero-width assertion: input start and end, ASCII word boundary or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Start,
    End,
    Word,
    NotWord,
}

/// A parsed pattern (built with [`Node::concat`], [`Node::alternation`]
/// and [`Node::repeat`], which drop the trivial shapes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Empty,
    /// One code point (a literal).
    Char(u32),
    /// Index of a set in the pattern's table (a class, `.` or an escape).
    Class(usize),
    Look(Look),
    Repeat(Box<Node>, u32, Option<u32>),
    Concat(Vec<Node>),
    Alternation(Vec<Node>),
}

impl Node {
    pub fn concat(mut nodes: Vec<Node>) -> Node {
        match nodes.len() {
            0 => Node::Empty,
            1 => nodes.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(nodes),
        }
    }

    pub fn alternation(mut nodes: Vec<Node>) -> Node {
        match nodes.len() {
            1 => nodes.pop().unwrap_or(Node::Empty),
            _ => Node::Alternation(nodes),
        }
    }

    pub fn repeat(node: Node, min: u32, max: Option<u32>) -> Node {
        match (min, max) {
            (0, Some(0)) => Node::Empty,
            (1, Some(1)) => node,
            _ => Node::Repeat(Box::new(node), min, max),
        }
    }

    fn matches_empty(&self) -> bool {
        match self {
            Node::Empty | Node::Look(_) => true,
            Node::Char(_) | Node::Class(_) => false,
            Node::Repeat(node, min, _) => *min == 0 || node.matches_empty(),
            Node::Concat(nodes) => nodes.iter().all(Node::matches_empty),
            Node::Alternation(nodes) => nodes.iter().any(Node::matches_empty),
        }
    }

    /// Whether every match starts at the input's start.
    fn anchored(&self) -> bool {
        match self {
            Node::Look(Look::Start) => true,
            Node::Repeat(node, min, _) => *min > 0 && node.anchored(),
            Node::Concat(nodes) => nodes.first().is_some_and(Node::anchored),
            Node::Alternation(nodes) => nodes.iter().all(Node::anchored),
            _ => false,
        }
    }

    /// Whether the tree is at most `limit` levels deeper than `depth`.
    fn within(&self, depth: usize, limit: usize) -> bool {
        depth <= limit
            && match self {
                Node::Repeat(node, ..) => node.within(depth + 1, limit),
                Node::Concat(nodes) | Node::Alternation(nodes) => {
                    nodes.iter().all(|node| node.within(depth + 1, limit))
                }
                _ => true,
            }
    }
}

/// A pattern parsed: its tree, its sets, and how deep its groups nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub node: Node,
    pub sets: Vec<Set>,
    pub groups: usize,
}

/// Code points: ranges, inclusive, ascending (their highs strictly: an
/// empty range may only sit where no code point falls); ASCII also by bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set {
    pub ranges: Vec<(u32, u32)>,
    ascii: u128,
}

impl Set {
    pub fn new(ranges: Vec<(u32, u32)>) -> Set {
        let mut ascii = 0u128;
        for &(low, high) in &ranges {
            for c in low..=high.min(127) {
                ascii |= 1 << c;
            }
        }
        Set { ranges, ascii }
    }

    pub fn contains(&self, c: u32) -> bool {
        if c < 128 {
            return self.ascii >> c & 1 == 1;
        }
        // A property has hundreds of ranges: a binary search, not a scan.
        let at = self.ranges.partition_point(|&(_, high)| high < c);
        self.ranges.get(at).is_some_and(|&(low, _)| low <= c)
    }
}

#[derive(Debug)]
enum State {
    Char(u32, u32),
    /// A set's index, the target.
    Set(usize, u32),
    Splits(Vec<u32>),
    Goto(Option<Look>, u32),
    Fail,
    Match,
}

/// A compiled pattern.
#[derive(Debug)]
pub struct Program {
    states: Vec<State>,
    sets: Vec<Set>,
    start: u32,
    anchored: bool,
    /// States visited per text character at most: each state once, a
    /// splits state once per target (the whole match's three not counted).
    pub work: usize,
}

/// A state's entry and exit while compiling.
#[derive(Clone, Copy)]
struct Piece {
    start: u32,
    end: u32,
}

struct Compiler<'p> {
    states: Vec<State>,
    sets: &'p [Set],
    bytes: usize,
}

impl Compiler<'_> {
    fn add(&mut self, state: State) -> Option<u32> {
        let extra = match &state {
            State::Set(set, _) => self.sets.get(*set).map_or(0, |set| set.ranges.len() * 8),
            _ => 0,
        };
        self.grow(STATE_BYTES + extra)?;
        let id = u32::try_from(self.states.len()).ok()?;
        self.states.push(state);
        Some(id)
    }

    fn grow(&mut self, bytes: usize) -> Option<()> {
        self.bytes = self.bytes.saturating_add(bytes);
        (self.bytes <= SIZE_LIMIT).then_some(())
    }

    fn one(&mut self, state: State) -> Option<Piece> {
        let id = self.add(state)?;
        Some(Piece { start: id, end: id })
    }

    fn empty(&mut self) -> Option<u32> {
        self.add(State::Goto(None, 0))
    }

    fn splits(&mut self) -> Option<u32> {
        self.add(State::Splits(Vec::new()))
    }

    fn patch(&mut self, from: u32, to: u32) -> Option<()> {
        match self.states.get_mut(from as usize)? {
            State::Char(_, target) | State::Set(_, target) | State::Goto(_, target) => {
                *target = to;
            }
            State::Splits(targets) => {
                targets.push(to);
                return self.grow(size_of::<u32>());
            }
            State::Fail | State::Match => {}
        }
        Some(())
    }

    fn node(&mut self, node: &Node) -> Option<Piece> {
        match node {
            Node::Empty => self.one(State::Goto(None, 0)),
            Node::Char(c) => self.one(State::Char(*c, 0)),
            Node::Class(set) => match self.sets.get(*set) {
                Some(s) if !s.ranges.is_empty() => self.one(State::Set(*set, 0)),
                _ => self.one(State::Fail),
            },
            Node::Look(look) => self.one(State::Goto(Some(*look), 0)),
            Node::Repeat(node, min, max) => self.repeat(node, *min, *max),
            Node::Concat(nodes) => self.concat(nodes.iter(), 1),
            Node::Alternation(nodes) => {
                let (first, rest) = nodes.split_first()?;
                let splits = self.splits()?;
                let end = self.empty()?;
                for node in core::iter::once(first).chain(rest) {
                    let piece = self.node(node)?;
                    self.patch(splits, piece.start)?;
                    self.patch(piece.end, end)?;
                }
                Some(Piece { start: splits, end })
            }
        }
    }

    /// `nodes`, `times` times over, in sequence.
    fn concat<'n>(
        &mut self,
        nodes: impl Iterator<Item = &'n Node> + Clone,
        times: u32,
    ) -> Option<Piece> {
        let mut whole: Option<Piece> = None;
        for _ in 0..times {
            for node in nodes.clone() {
                let piece = self.node(node)?;
                whole = Some(match whole {
                    None => piece,
                    Some(before) => {
                        self.patch(before.end, piece.start)?;
                        Piece {
                            start: before.start,
                            end: piece.end,
                        }
                    }
                });
            }
        }
        match whole {
            Some(piece) => Some(piece),
            None => self.one(State::Goto(None, 0)),
        }
    }

    fn repeat(&mut self, node: &Node, min: u32, max: Option<u32>) -> Option<Piece> {
        let once = core::iter::once(node);
        match max {
            Some(1) if min == 0 => {
                let splits = self.splits()?;
                let piece = self.node(node)?;
                let end = self.empty()?;
                self.patch(splits, piece.start)?;
                self.patch(splits, end)?;
                self.patch(piece.end, end)?;
                Some(Piece { start: splits, end })
            }
            Some(max) => {
                let prefix = self.concat(once, min)?;
                if min == max {
                    return Some(prefix);
                }
                let end = self.empty()?;
                let mut previous = prefix.end;
                for _ in min..max {
                    let splits = self.splits()?;
                    let piece = self.node(node)?;
                    self.patch(previous, splits)?;
                    self.patch(splits, piece.start)?;
                    self.patch(splits, end)?;
                    previous = piece.end;
                }
                self.patch(previous, end)?;
                Some(Piece {
                    start: prefix.start,
                    end,
                })
            }
            None if min == 0 && !node.matches_empty() => {
                let splits = self.splits()?;
                let piece = self.node(node)?;
                self.patch(splits, piece.start)?;
                self.patch(piece.end, splits)?;
                Some(Piece {
                    start: splits,
                    end: splits,
                })
            }
            None if min == 0 => {
                let piece = self.node(node)?;
                let plus = self.splits()?;
                self.patch(piece.end, plus)?;
                self.patch(plus, piece.start)?;
                let question = self.splits()?;
                let end = self.empty()?;
                self.patch(question, piece.start)?;
                self.patch(question, end)?;
                self.patch(plus, end)?;
                Some(Piece {
                    start: question,
                    end,
                })
            }
            None => {
                let prefix = match min {
                    1 => None,
                    _ => Some(self.concat(once, min - 1)?),
                };
                let last = self.node(node)?;
                let splits = self.splits()?;
                if let Some(prefix) = prefix {
                    self.patch(prefix.end, last.start)?;
                }
                self.patch(last.end, splits)?;
                self.patch(splits, last.start)?;
                Some(Piece {
                    start: prefix.map_or(last.start, |p| p.start),
                    end: splits,
                })
            }
        }
    }
}

impl Program {
    /// `parsed` compiled, or `None` past the limits. `wrapped`: run as
    /// `^(?:…)`, one group and one level deeper.
    pub fn new(parsed: Parsed, wrapped: bool) -> Option<Program> {
        let node = match wrapped {
            true => Node::Concat(vec![Node::Look(Look::Start), parsed.node]),
            false => parsed.node,
        };
        if parsed.groups + usize::from(wrapped) > NEST_LIMIT || !node.within(0, NEST_LIMIT) {
            return None;
        }
        let mut compiler = Compiler {
            states: Vec::new(),
            sets: &parsed.sets,
            bytes: NAME_BYTES,
        };
        // The whole match's capture group (two states), then the match.
        let open = compiler.empty()?;
        let inner = compiler.node(&node)?;
        let close = compiler.empty()?;
        compiler.patch(open, inner.start)?;
        compiler.patch(inner.end, close)?;
        let done = compiler.add(State::Match)?;
        compiler.patch(close, done)?;
        let states = compiler.states;
        let targets: usize = states
            .iter()
            .map(|state| match state {
                State::Splits(targets) => targets.len(),
                _ => 0,
            })
            .sum();
        Some(Program {
            work: (states.len() + targets).saturating_sub(3),
            states,
            sets: parsed.sets,
            start: open,
            anchored: node.anchored(),
        })
    }

    /// Searches `text`, calling `found(at)` at each position `at` where
    /// some match ends, in order, until it says to stop; whether it did.
    pub fn search(&self, text: &str, mut found: impl FnMut(usize) -> bool) -> bool {
        self.scan(text, 0, self.anchored, &mut found)
    }

    /// [`Program::search`] from byte `from` of `text` (a character
    /// boundary), with matches starting there only when `once`. (`found`
    /// is called only where a match ends: one copy of this loop for
    /// every caller.)
    fn scan(
        &self,
        text: &str,
        from: usize,
        once: bool,
        found: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        let count = self.states.len();
        let mut seen = vec![0usize; count];
        let mut stamp = 0usize;
        // Threads at a consuming state; the targets they move to.
        let mut threads: Vec<u32> = Vec::with_capacity(count);
        let mut moved: Vec<u32> = Vec::with_capacity(count);
        let mut stack: Vec<u32> = Vec::new();
        let mut before = text.get(..from).and_then(|head| head.chars().next_back());
        let mut at = from;
        loop {
            let rest = text.get(at..).unwrap_or("");
            let next = rest.chars().next();
            stamp += 1;
            threads.clear();
            if !once || at == from {
                moved.push(self.start);
            }
            // Each state at most once per position.
            for &target in moved.iter() {
                stack.push(target);
                while let Some(id) = stack.pop() {
                    let Some(mark) = seen.get_mut(id as usize) else {
                        continue;
                    };
                    if *mark == stamp {
                        continue;
                    }
                    *mark = stamp;
                    match self.states.get(id as usize) {
                        Some(State::Char(..) | State::Set(..)) => threads.push(id),
                        Some(State::Splits(targets)) => stack.extend(targets.iter().rev()),
                        Some(State::Goto(look, target)) => {
                            if look.is_none_or(|look| holds(look, before, next, at, text.len())) {
                                stack.push(*target);
                            }
                        }
                        Some(State::Match) => {
                            if found(at) {
                                return true;
                            }
                        }
                        Some(State::Fail) | None => {}
                    }
                }
            }
            moved.clear();
            let Some(c) = next else {
                return false;
            };
            if threads.is_empty() && once {
                return false;
            }
            let code = u32::from(c);
            for &id in &threads {
                match self.states.get(id as usize) {
                    Some(State::Char(want, target)) if *want == code => moved.push(*target),
                    Some(State::Set(set, target))
                        if self.sets.get(*set).is_some_and(|set| set.contains(code)) =>
                    {
                        moved.push(*target)
                    }
                    _ => {}
                }
            }
            before = Some(c);
            at += c.len_utf8();
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.search(text, |_| true)
    }

    /// Whether a match starts at byte `at` of `text`.
    #[cfg(test)]
    pub fn matches_at(&self, text: &str, at: usize) -> bool {
        self.scan(text, at, true, &mut |_| true)
    }

    /// Whether a search looks for matches at the input's start only.
    #[cfg(test)]
    pub fn is_anchored(&self) -> bool {
        self.anchored
    }
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn holds(look: Look, before: Option<char>, next: Option<char>, at: usize, len: usize) -> bool {
    match look {
        Look::Start => at == 0,
        Look::End => at == len,
        Look::Word => is_word(before) != is_word(next),
        Look::NotWord => is_word(before) == is_word(next),
    }
}
