//! Minimal RFC 3986 URI-reference resolution and JSON Pointer helpers.
//!
//! Only what `$id` / `$ref` handling needs: parse a URI reference into its five
//! components, resolve it against an absolute base (RFC 3986 section 5.2),
//! split off / percent-decode fragments, and escape / unescape JSON Pointer
//! tokens. Never panics: all string handling goes through byte scans for
//! ASCII delimiters and `get`. No `core::fmt`, char searchers or
//! `str::from_utf8` in here (each costs code in the wasm module).
use crate::prelude::*;

/// The base URI of a schema document that has no `$id`.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///";

/// The five components of a URI reference (RFC 3986 appendix B).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct UriRef<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// A letter, then letters, digits, `+`, `-` and `.`.
fn is_scheme(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().enumerate().all(|(i, c)| {
            c.is_ascii_alphabetic()
                || (i > 0 && (c.is_ascii_digit() || c == b'+' || c == b'-' || c == b'.'))
        })
}

/// The byte offset of the first (or the `last`) `b`, an ASCII byte, in `s`:
/// one plain loop for both (no char searcher, no unrolled `position` in
/// the wasm).
fn scan_byte(s: &str, b: u8, last: bool) -> Option<usize> {
    let mut found = None;
    for (i, &c) in s.as_bytes().iter().enumerate() {
        if c == b {
            found = Some(i);
            if !last {
                break;
            }
        }
    }
    found
}

/// The byte offset of the first `b` (an ASCII byte) in `s`.
fn find_byte(s: &str, b: u8) -> Option<usize> {
    scan_byte(s, b, false)
}

/// `s.split_once(b)` for an ASCII byte `b`.
fn split_once_byte(s: &str, b: u8) -> Option<(&str, &str)> {
    let (before, rest) = split_at(s, find_byte(s, b)?);
    Some((before, rest.get(1..)?))
}

fn parse(s: &str) -> UriRef<'_> {
    let mut rest = s;
    let mut out = UriRef::default();
    if let Some((before, after)) = split_once_byte(rest, b'#') {
        out.fragment = Some(after);
        rest = before;
    }
    if let Some((before, after)) = split_once_byte(rest, b'?') {
        out.query = Some(after);
        rest = before;
    }
    if let Some((scheme, after)) = split_once_byte(rest, b':') {
        if is_scheme(scheme) {
            out.scheme = Some(scheme);
            rest = after;
        }
    }
    if let Some(after) = rest.strip_prefix("//") {
        let end = find_byte(after, b'/').unwrap_or(after.len());
        let (authority, path) = split_at(after, end);
        out.authority = Some(authority);
        rest = path;
    }
    out.path = rest;
    out
}

/// The byte offset of the last '/' (`str::rfind` costs more code).
pub(crate) fn last_slash(s: &str) -> Option<usize> {
    scan_byte(s, b'/', true)
}

/// `str::split_at` that never panics (falls back to "everything, nothing").
fn split_at(s: &str, at: usize) -> (&str, &str) {
    match (s.get(..at), s.get(at..)) {
        (Some(a), Some(b)) => (a, b),
        _ => (s, ""),
    }
}

/// RFC 3986 section 5.2.4.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path;
    // Segments moved so far: "/seg" (or a leading "seg"), so the last one
    // starts at the last '/'.
    let mut output = String::with_capacity(path.len());
    while !input.is_empty() {
        // A: a leading "../" or "./" goes.
        if let Some(r) = input
            .strip_prefix("../")
            .or_else(|| input.strip_prefix("./"))
        {
            input = r;
            continue;
        }
        // The first segment (after its '/', if any) and what follows it
        // (empty or from the next '/').
        let slash = input.starts_with('/');
        let rest = input.get(usize::from(slash)..).unwrap_or("");
        let end = find_byte(rest, b'/').unwrap_or(rest.len());
        let (segment, after) = split_at(rest, end);
        if segment == "." || segment == ".." {
            // B, C: "/./" and "/." become "/", so do "/../" and "/.." after
            // dropping the last output segment; D: a lone "." or ".." goes.
            if slash && segment == ".." {
                output.truncate(last_slash(&output).unwrap_or(0));
            }
            input = if slash && after.is_empty() {
                "/"
            } else {
                after
            };
        } else {
            // E: the segment, with its '/', moves to the output.
            let (moved, r) = split_at(input, end.saturating_add(usize::from(slash)));
            output.push_str(moved);
            input = r;
        }
    }
    output
}

fn merge_paths(base: &UriRef<'_>, reference_path: &str) -> String {
    let dir = if base.authority.is_some() && base.path.is_empty() {
        "/"
    } else {
        match last_slash(base.path) {
            Some(i) => base.path.get(..=i).unwrap_or(""),
            None => "",
        }
    };
    let mut out = String::from(dir);
    out.push_str(reference_path);
    out
}

fn recompose(
    scheme: Option<&str>,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
) -> String {
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Resolve `reference` against the absolute URI `base` (RFC 3986 section 5.2.2).
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let b = parse(base);
    let r = parse(reference);
    // The target's components, recomposed once.
    let (mut scheme, mut authority, mut query) = (b.scheme, b.authority, r.query);
    let path = if r.scheme.is_some() || r.authority.is_some() {
        if r.scheme.is_some() {
            scheme = r.scheme;
        }
        authority = r.authority;
        remove_dot_segments(r.path)
    } else if r.path.is_empty() {
        if r.query.is_none() {
            query = b.query;
        }
        b.path.to_string()
    } else if r.path.starts_with('/') {
        remove_dot_segments(r.path)
    } else {
        remove_dot_segments(&merge_paths(&b, r.path))
    };
    recompose(scheme, authority, &path, query, r.fragment)
}

/// Split `uri` into the part before `#` and the (raw) fragment after it.
pub(crate) fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match split_once_byte(uri, b'#') {
        Some((doc, frag)) => (doc, Some(frag)),
        None => (uri, None),
    }
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b.wrapping_sub(b'0')),
        b'a'..=b'f' => Some(b.wrapping_sub(b'a').wrapping_add(10)),
        b'A'..=b'F' => Some(b.wrapping_sub(b'A').wrapping_add(10)),
        _ => None,
    }
}

/// Percent-decode; malformed escapes are kept literally, invalid UTF-8 is replaced.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hi = bytes.get(i.saturating_add(1)).copied().and_then(hex_val);
            let lo = bytes.get(i.saturating_add(2)).copied().and_then(hex_val);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push(hi.wrapping_mul(16).wrapping_add(lo));
                i = i.saturating_add(3);
                continue;
            }
        }
        out.push(b);
        i = i.saturating_add(1);
    }
    lossy(&out)
}

/// `String::from_utf8_lossy(bytes).into_owned()`, decoded by hand (no
/// `str::from_utf8` in the wasm): each maximal invalid sequence (a byte that
/// cannot start a character, or the start of one cut short) becomes one
/// U+FFFD, as there.
fn lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0usize;
    while let Some(&lead) = bytes.get(i) {
        // The sequence's length and the range of its second byte (Unicode
        // table 3-7); the other continuation bytes are 80..=BF.
        let (width, low, high) = match lead {
            0x00..=0x7f => (1, 0, 0),
            0xc2..=0xdf => (2, 0x80, 0xbf),
            0xe0 => (3, 0xa0, 0xbf),
            0xed => (3, 0x80, 0x9f),
            0xe1..=0xef => (3, 0x80, 0xbf),
            0xf0 => (4, 0x90, 0xbf),
            0xf1..=0xf3 => (4, 0x80, 0xbf),
            0xf4 => (4, 0x80, 0x8f),
            _ => (0, 0, 0),
        };
        // The lead byte's payload: 7, 5, 4 or 3 bits.
        let mut code = u32::from(lead) & if width > 1 { 0xff >> (width + 1) } else { 0x7f };
        let mut n = 1usize;
        while n < width {
            let (low, high) = if n == 1 { (low, high) } else { (0x80, 0xbf) };
            match bytes.get(i.saturating_add(n)) {
                Some(&b) if (low..=high).contains(&b) => {
                    code = code << 6 | u32::from(b & 0x3f);
                    n += 1;
                }
                _ => break,
            }
        }
        out.push(if n == width {
            char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
        } else {
            char::REPLACEMENT_CHARACTER
        });
        i = i.saturating_add(n);
    }
    out
}

/// Appends `token` escaped as a JSON Pointer reference token (RFC 6901).
pub(crate) fn escape_token(out: &mut String, token: &str) {
    // One scan (as `replace('~', "~0")` then `replace('/', "~1")`).
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            _ => out.push(c),
        }
    }
}

/// Unescape one JSON Pointer reference token (RFC 6901).
pub(crate) fn unescape_token(token: &str) -> String {
    // `~1` → `/` and `~0` → `~` in one scan (as `replace("~1", "/")` then
    // `replace("~0", "~")`, without the substring searcher in the wasm).
    let mut out = String::with_capacity(token.len());
    let mut rest = token;
    while let Some((before, after)) = split_once_byte(rest, b'~') {
        out.push_str(before);
        let (unescaped, skip) = match after.as_bytes().first() {
            Some(b'1') => ("/", 1),
            Some(b'0') => ("~", 1),
            _ => ("~", 0),
        };
        out.push_str(unescaped);
        rest = after.get(skip..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// The first unescaped token of a JSON Pointer given without its leading
/// '/' (`"a/b"` for `/a/b`), and what follows the token's '/', if any:
/// callers walk the tokens in a loop (no `Vec` of them).
pub(crate) fn next_token(rest: &str) -> (String, Option<&str>) {
    match split_once_byte(rest, b'/') {
        Some((token, after)) => (unescape_token(token), Some(after)),
        None => (unescape_token(rest), None),
    }
}

/// Split a JSON Pointer ("" or "/a/b") into unescaped tokens.
/// Returns `None` when the pointer is not empty and does not start with '/'.
#[cfg(test)]
pub(crate) fn pointer_tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let mut rest = pointer.strip_prefix('/');
    let mut out = Vec::new();
    while let Some(r) = rest {
        let (token, after) = next_token(r);
        out.push(token);
        rest = after;
    }
    Some(out)
}

/// Parse an array index token: decimal digits without leading zeros.
pub(crate) fn array_index(token: &str) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    // As `token.parse()`: digits only, `None` past `usize::MAX`.
    let mut n = 0usize;
    for b in token.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n
            .checked_mul(10)?
            .checked_add(usize::from(b.wrapping_sub(b'0')))?;
    }
    Some(n)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::string_slice)]
mod tests {
    use super::*;

    /// `resolve` as first written, one `recompose` per case of RFC 3986
    /// section 5.2.2: the reference.
    fn resolve_by_cases(base: &str, reference: &str) -> String {
        let b = parse(base);
        let r = parse(reference);
        if r.scheme.is_some() {
            let path = remove_dot_segments(r.path);
            return recompose(r.scheme, r.authority, &path, r.query, r.fragment);
        }
        if r.authority.is_some() {
            let path = remove_dot_segments(r.path);
            return recompose(b.scheme, r.authority, &path, r.query, r.fragment);
        }
        if r.path.is_empty() {
            let query = if r.query.is_some() { r.query } else { b.query };
            return recompose(b.scheme, b.authority, b.path, query, r.fragment);
        }
        let path = if r.path.starts_with('/') {
            remove_dot_segments(r.path)
        } else {
            remove_dot_segments(&merge_paths(&b, r.path))
        };
        recompose(b.scheme, b.authority, &path, r.query, r.fragment)
    }

    /// Every string made of at most `rounds` of `parts`, each once.
    fn joins_of(parts: &[&str], rounds: usize) -> Vec<String> {
        let mut joins = vec![String::new()];
        for _ in 0..rounds {
            let longer: Vec<String> = joins
                .iter()
                .flat_map(|t| parts.iter().map(move |p| format!("{t}{p}")))
                .collect();
            joins.extend(longer);
            joins.sort();
            joins.dedup();
        }
        joins
    }

    #[test]
    fn resolve_agrees_with_the_cases() {
        let parts = [
            "", "g", "./", "../", "/", "//h", "s:", "urn:", "?q", "?", "#f", "#", "x/", "..", ".",
            ";p", "a:b",
        ];
        let refs = joins_of(&parts, 3);
        let bases = [
            DEFAULT_BASE,
            "http://a/b/c/d;p?q",
            "http://a",
            "urn:x",
            "s://h/p/",
            "tag:a?q",
        ];
        for base in bases {
            for r in &refs {
                assert_eq!(resolve(base, r), resolve_by_cases(base, r), "{base} {r}");
            }
        }
    }

    #[test]
    fn tokens_escape_and_unescape_as_replace() {
        // Every string of up to 6 chars over an alphabet that makes escapes.
        let tokens = joins_of(&["~", "0", "1", "/", "é"], 6);
        for token in tokens {
            let want = token.replace("~1", "/").replace("~0", "~");
            assert_eq!(unescape_token(&token), want, "{token}");
            let escaped = token.replace('~', "~0").replace('/', "~1");
            let mut out = String::from("x");
            escape_token(&mut out, &token);
            assert_eq!(out, format!("x{escaped}"), "{token}");
            assert_eq!(unescape_token(&escaped), token, "{token}");
        }
    }

    /// RFC 3986 5.2.4 as first written, segment by segment in a `Vec`.
    fn remove_dot_segments_by_vec(path: &str) -> String {
        let mut input = path;
        let mut output: Vec<&str> = Vec::new();
        while !input.is_empty() {
            if let Some(r) = input.strip_prefix("../") {
                input = r;
            } else if let Some(r) = input.strip_prefix("./") {
                input = r;
            } else if input.starts_with("/./") {
                input = &input[2..];
            } else if input == "/." {
                input = "/";
            } else if input.starts_with("/../") {
                input = &input[3..];
                output.pop();
            } else if input == "/.." {
                input = "/";
                output.pop();
            } else if input == "." || input == ".." {
                input = "";
            } else {
                let start = usize::from(input.starts_with('/'));
                let end = input[start..].find('/').map_or(input.len(), |i| i + start);
                output.push(&input[..end]);
                input = &input[end..];
            }
        }
        output.concat()
    }

    #[test]
    fn dot_segments_agree_with_the_segment_list() {
        let alphabet = ['/', '.', 'a'];
        let mut paths = vec![String::new()];
        for _ in 0..9 {
            let longer: Vec<String> = paths
                .iter()
                .filter(|p| p.len() == paths.last().map_or(0, String::len))
                .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
                .collect();
            paths.extend(longer);
        }
        assert!(paths.len() > 20_000);
        for path in paths {
            assert_eq!(
                remove_dot_segments(&path),
                remove_dot_segments_by_vec(&path),
                "{path}"
            );
        }
    }

    #[test]
    fn lossy_is_from_utf8_lossy() {
        // Every sequence of up to 3 bytes, then random longer ones.
        let check = |bytes: &[u8]| {
            assert_eq!(lossy(bytes), String::from_utf8_lossy(bytes), "{bytes:?}");
        };
        check(&[]);
        for a in 0..=255u8 {
            check(&[a]);
            for b in 0..=255u8 {
                check(&[a, b]);
            }
        }
        let interesting: Vec<u8> = (0x00..0x03)
            .chain(0x7e..0x82)
            .chain(0xbe..0xc3)
            .chain(0xdf..0xe2)
            .chain(0xec..0xf6)
            .chain(0xfe..=0xff)
            .collect();
        for &a in &interesting {
            for &b in &interesting {
                for &c in &interesting {
                    check(&[a, b, c]);
                    for &d in &interesting {
                        check(&[a, b, c, d]);
                    }
                }
            }
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let bytes: Vec<u8> = (0..12)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    interesting[(state % interesting.len() as u64) as usize]
                })
                .collect();
            check(&bytes);
        }
    }

    #[test]
    fn rfc3986_examples() {
        let base = "http://a/b/c/d;p?q";
        let cases = [
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
        ];
        for (r, want) in cases {
            assert_eq!(resolve(base, r), want, "resolving {r:?}");
        }
    }

    /// RFC 3986 3.1: a scheme is a letter, then letters, digits, `+`, `-`
    /// and `.`; before a `:`, anything else is the start of a relative path.
    #[test]
    fn a_scheme_is_a_letter_then_letters_digits_plus_minus_dot() {
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("a1+-.:x", "a1+-.:x"),
            ("Z:x", "Z:x"),
            ("1a:x", "http://a/b/c/1a:x"),
            ("+a:x", "http://a/b/c/+a:x"),
            ("a_b:x", "http://a/b/c/a_b:x"),
            (":x", "http://a/b/c/:x"),
        ] {
            assert_eq!(resolve(base, r), want, "resolving {r:?}");
        }
    }

    /// RFC 3986 2.1: the two hex digits of a percent escape are
    /// case-insensitive.
    #[test]
    fn percent_escapes_take_either_case() {
        assert_eq!(percent_decode("a%2fb%2Fc%c3%A9%C3%a9"), "a/b/céé");
    }

    #[test]
    fn urn_and_default_base() {
        assert_eq!(
            resolve("urn:uuid:deadbeef", "#/$defs/bar"),
            "urn:uuid:deadbeef#/$defs/bar"
        );
        assert_eq!(resolve(DEFAULT_BASE, "list"), "json-schema:///list");
        assert_eq!(resolve(DEFAULT_BASE, "#foo"), "json-schema:///#foo");
        assert_eq!(percent_decode("a%25b%22c%zz"), "a%b\"c%zz");
        assert_eq!(
            pointer_tokens("/a~1b/c~0d//").unwrap(),
            vec!["a/b", "c~d", "", ""]
        );
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("+1"), None);
        assert_eq!(array_index("10"), Some(10));
        let max = usize::MAX.to_string();
        let over = format!("{max}0");
        for t in [
            "", "0", "7", "123", "1a", "-1", " 1", "1 ", "٣", &max, &over,
        ] {
            let want = t
                .parse::<usize>()
                .ok()
                .filter(|_| t.bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(array_index(t), want, "{t}");
        }
    }
}
