//! The draft 2020-12 meta-schemas, bundled (origin and license:
//! `src/schema/meta/README.md`), so that a `$ref` / `$dynamicRef` to
//! `https://json-schema.org/draft/2020-12/schema` or one of its `meta/*`
//! vocabularies resolves. A document is parsed only when a schema being
//! compiled refers to it; schemas that never do pay nothing.
//!
//! Inside the compiler the schemas of bundled document `k` have pointers
//! starting with the digit `k` (`1/$defs/anchorString`); the document being
//! compiled has `""` or `/...` pointers, so the two never collide.

use crate::prelude::*;
use core::cell::OnceCell;
use serde_json::Value;

/// The URI the bundled documents' `$id`s start with.
const BASE: &str = "https://json-schema.org/draft/2020-12/";

/// How many documents are bundled.
pub(super) const COUNT: usize = 8;

/// Per document: its `$id` after [`BASE`], and its text.
const DOCUMENTS: [(&str, &str); COUNT] = [
    ("schema", include_str!("meta/schema.json")),
    ("meta/core", include_str!("meta/core.json")),
    ("meta/applicator", include_str!("meta/applicator.json")),
    ("meta/unevaluated", include_str!("meta/unevaluated.json")),
    ("meta/validation", include_str!("meta/validation.json")),
    ("meta/meta-data", include_str!("meta/meta-data.json")),
    (
        "meta/format-annotation",
        include_str!("meta/format-annotation.json"),
    ),
    ("meta/content", include_str!("meta/content.json")),
];

/// The documents parsed so far in one compilation, by index.
pub(super) type Loaded = [OnceCell<Value>; COUNT];

/// The index of the bundled document whose `$id` is `uri` (no fragment).
pub(super) fn index(uri: &str) -> Option<usize> {
    let name = uri.strip_prefix(BASE)?;
    DOCUMENTS.iter().position(|(n, _)| *n == name)
}

/// The pointer prefix of document `k` (`k` < [`COUNT`] < 10: one digit).
pub(super) fn prefix(k: usize) -> String {
    let digit = u8::try_from(k).map_or(b'0', |k| b'0'.saturating_add(k));
    String::from(char::from(digit))
}

/// Split a compiler pointer into its bundled document's index (`None`: the
/// document being compiled) and the JSON pointer inside that document.
pub(super) fn split_pointer(pointer: &str) -> (Option<usize>, &str) {
    match pointer.as_bytes().first() {
        Some(&b) if b.is_ascii_digit() => (
            Some(usize::from(b.wrapping_sub(b'0'))),
            pointer.get(1..).unwrap_or(""),
        ),
        _ => (None, pointer),
    }
}

/// Document `k`, parsed into `loaded` on first use. `None` when `k` is not
/// bundled (or, which the unit tests rule out, its text is not JSON).
pub(super) fn load(loaded: &Loaded, k: usize) -> Option<&Value> {
    let cell = loaded.get(k)?;
    if cell.get().is_none() {
        let (_, text) = DOCUMENTS.get(k)?;
        let value = crate::json_value::parse(text).ok()?;
        // Empty: `set` cannot fail.
        let _ = cell.set(value);
    }
    cell.get()
}

/// The location of a compiler pointer for error messages: a fragment of
/// the document being compiled (`#/properties/a`), or the bundled
/// document's URI with the fragment.
pub(super) fn location(pointer: &str) -> String {
    let (doc, rest) = split_pointer(pointer);
    let mut s = String::new();
    if let Some((name, _)) = doc.and_then(|k| DOCUMENTS.get(k)) {
        s.push_str(BASE);
        s.push_str(name);
    }
    s.push('#');
    s.push_str(rest);
    s
}
