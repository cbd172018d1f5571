//! The rules of `getPath`, `setPath` and `flatten` (dotted paths,
//! `items.0.name`), whose walks are JS (`js/src/paths.js`: property reads
//! and writes, which from wasm were a crossing each). Unsafe or malformed
//! paths are refused (`invalid_path`); `__proto__`, `prototype` and
//! `constructor` are never walked or written.
//!
//! Bounds, whatever the value (an agent can build a deep draft with one
//! long path): a path has at most [`MAX_PATH_SEGMENTS`] segments and
//! [`MAX_PATH_LENGTH`] characters; `flatten` walks at most
//! [`MAX_PATH_SEGMENTS`] levels and [`MAX_FLATTEN_VALUES`] values, writes
//! paths of at most [`MAX_FLATTEN_PATH_BYTES`] UTF-8 bytes and at most
//! [`MAX_FLATTEN_OUTPUT_BYTES`] in all, and refuses a value that contains
//! itself and a key that is empty, has a dot or is one of [`FORBIDDEN`].
//! Past a bound: `invalid_path`. With these, `flatten`'s time is linear in
//! its output, whatever the input.

use crate::prelude::*;
use crate::protocol::DEFAULT_MAX_MESSAGE_BYTES;

/// Segments never walked or written, keys `flatten` refuses.
pub const FORBIDDEN: [&str; 3] = ["__proto__", "prototype", "constructor"];

/// Most segments in a path, and deepest nesting `flatten` walks.
pub const MAX_PATH_SEGMENTS: usize = 1000;

/// Longest path argument, in UTF-16 code units (the protocol's message
/// limit; no real path is near it). The paths `flatten` writes are shorter
/// still: [`MAX_FLATTEN_PATH_BYTES`].
pub const MAX_PATH_LENGTH: usize = DEFAULT_MAX_MESSAGE_BYTES;

/// Longest path `flatten` writes, in UTF-8 bytes (so at most as many
/// UTF-16 units): V8 hashes a string of more than 16,383 units by its
/// length alone, so an object whose keys are longer collides on every
/// insertion of keys of one length, and building it is quadratic.
pub const MAX_FLATTEN_PATH_BYTES: usize = 16_000;

/// Most bytes one `flatten` output holds: every path's UTF-8 bytes plus
/// each string leaf's (any other leaf counts 8). Four times the protocol's
/// message limit: paths repeat their prefixes, so the output of a 1 MiB
/// input is larger than the input.
pub const MAX_FLATTEN_OUTPUT_BYTES: usize = 4 * DEFAULT_MAX_MESSAGE_BYTES;

/// Most values (containers and leaves) one `flatten` visits: a value that
/// shares its parts (`a = {x: b, y: b}`, `b = {x: c, y: c}`, …) has
/// exponentially many paths, and an object of many keys is slow for a JS
/// engine to build (100,000 keys took Chromium 60–140 ms in a fresh page;
/// 20,000 keep `flatten` well under 50 ms).
pub const MAX_FLATTEN_VALUES: usize = 20_000;

/// A path argument before its text is read: a string (`length`, its
/// UTF-16 units; `None` for any other value, whose `typeof` is asked for
/// only to say so) of at most [`MAX_PATH_LENGTH`] units.
pub fn argument(length: Option<usize>, type_of: impl FnOnce() -> String) -> Result<(), String> {
    let Some(length) = length else {
        return Err(format!("path must be a string, not {}", type_of()));
    };
    if length > MAX_PATH_LENGTH {
        return Err(format!("path is longer than {MAX_PATH_LENGTH} characters"));
    }
    Ok(())
}

/// The segments of a path as the module read the page's string:
/// `well_formed` is false when the string held a lone surrogate, read as
/// U+FFFD, so that no segment could name the page's key exactly (`setPath`
/// would write another key). Refused; else [`segments`].
pub fn read_segments(path: &str, well_formed: bool) -> Result<Vec<&str>, String> {
    if !well_formed {
        return Err(String::from(
            "path has a lone surrogate (half of a UTF-16 pair), which no path names exactly",
        ));
    }
    segments(path)
}

/// The segments of a valid, safe path (none for `""`): at most
/// [`MAX_PATH_SEGMENTS`], none empty or [`FORBIDDEN`].
pub fn segments(path: &str) -> Result<Vec<&str>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    if path.split('.').count() > MAX_PATH_SEGMENTS {
        return Err(format!("path has more than {MAX_PATH_SEGMENTS} segments"));
    }
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts {
        if part.is_empty() {
            return Err(format!("path \"{path}\" has an empty segment"));
        }
        if FORBIDDEN.contains(part) {
            return Err(format!(
                "path \"{path}\" uses the unsafe segment \"{part}\""
            ));
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_split_at_its_dots() {
        assert_eq!(segments(""), Ok(vec![]));
        assert_eq!(segments("a"), Ok(vec!["a"]));
        assert_eq!(segments("items.0.name"), Ok(vec!["items", "0", "name"]));
        assert_eq!(segments(" a .b "), Ok(vec![" a ", "b "]));
        assert_eq!(segments("protos.__proto"), Ok(vec!["protos", "__proto"]));
    }

    #[test]
    fn empty_and_unsafe_segments_are_refused() {
        for (path, why) in [
            ("a..b", "path \"a..b\" has an empty segment"),
            (".a", "path \".a\" has an empty segment"),
            ("a.", "path \"a.\" has an empty segment"),
            (".", "path \".\" has an empty segment"),
            (
                "a.__proto__.b",
                "path \"a.__proto__.b\" uses the unsafe segment \"__proto__\"",
            ),
            (
                "prototype",
                "path \"prototype\" uses the unsafe segment \"prototype\"",
            ),
            (
                "x.constructor",
                "path \"x.constructor\" uses the unsafe segment \"constructor\"",
            ),
        ] {
            assert_eq!(segments(path), Err(String::from(why)), "{path}");
        }
    }

    #[test]
    fn a_path_read_with_a_lone_surrogate_is_refused() {
        assert_eq!(read_segments("a.b", true), Ok(vec!["a", "b"]));
        assert!(read_segments("a.\u{FFFD}", false).is_err());
        assert_eq!(read_segments("a.\u{FFFD}", true), Ok(vec!["a", "\u{FFFD}"]));
    }

    #[test]
    fn a_path_has_at_most_a_thousand_segments() {
        let most = vec!["a"; MAX_PATH_SEGMENTS].join(".");
        assert_eq!(segments(&most).map(|s| s.len()), Ok(MAX_PATH_SEGMENTS));
        let more = vec!["a"; MAX_PATH_SEGMENTS + 1].join(".");
        assert_eq!(
            segments(&more),
            Err(String::from("path has more than 1000 segments"))
        );
        // Counted before the segments are checked: a long run of dots is
        // refused by its count.
        let dots = ".".repeat(MAX_PATH_SEGMENTS);
        assert_eq!(
            segments(&dots),
            Err(String::from("path has more than 1000 segments"))
        );
    }

    #[test]
    fn the_bounds_are_the_figures_js_and_the_docs_name() {
        // js/src/paths.js reads them (pathRules); tests/node/flatten-bounds
        // and API users see them in refusals.
        assert_eq!(MAX_PATH_LENGTH, 1_048_576);
        assert_eq!(MAX_FLATTEN_OUTPUT_BYTES, 4_194_304);
        assert_eq!(MAX_FLATTEN_PATH_BYTES, 16_000);
        assert_eq!(MAX_FLATTEN_VALUES, 20_000);
        assert_eq!(FORBIDDEN, ["__proto__", "prototype", "constructor"]);
    }

    #[test]
    fn a_path_argument_is_a_string_of_at_most_a_mebibyte() {
        let string = || String::from("string");
        assert_eq!(argument(Some(0), string), Ok(()));
        assert_eq!(argument(Some(MAX_PATH_LENGTH), string), Ok(()));
        assert_eq!(
            argument(Some(MAX_PATH_LENGTH + 1), string),
            Err(String::from("path is longer than 1048576 characters"))
        );
        for type_of in ["number", "undefined", "object", "symbol"] {
            assert_eq!(
                argument(None, || String::from(type_of)),
                Err(format!("path must be a string, not {type_of}"))
            );
        }
    }
}
