//! Ids and names: UUID v4 from injected random bytes (formatted by the
//! `uuid` crate), and `llmName`.
//!
//! The core never reads global randomness: callers hand in 16 random bytes
//! (in WebAssembly from `crypto.getRandomValues`, in tests from a seeded source).
use crate::prelude::*;

/// A source of cryptographically random bytes, injected into the core.
pub trait RandomSource {
    /// Fills `buf` with random bytes. Errors leave the id unminted.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError>;
}

/// The random source failed (for instance, no `crypto` in this realm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RandomError(pub String);

impl RandomError {
    /// What `Display` writes.
    pub fn message(&self) -> String {
        let mut text = String::from(RANDOM_FAILED);
        text.push_str(&self.0);
        text
    }
}

/// What [`RandomError`]'s text starts with.
const RANDOM_FAILED: &str = "random source failed: ";

impl core::fmt::Display for RandomError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(RANDOM_FAILED)?;
        f.write_str(&self.0)
    }
}

impl core::error::Error for RandomError {}

/// Formats 16 random bytes as an RFC 4122 version 4 UUID (lowercase, hyphenated):
/// the version nibble is forced to 4 and the variant bits to `10`.
/// Written by uuid's encoder into its buffer (not its `Display`, which
/// would go through `core::fmt`).
pub fn uuid_v4_from_bytes(bytes: [u8; 16]) -> String {
    let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
    String::from(
        &*uuid
            .hyphenated()
            .encode_lower(&mut uuid::Uuid::encode_buffer()),
    )
}

/// Mints a UUID v4 from the injected random source.
pub fn new_id(rng: &mut dyn RandomSource) -> Result<String, RandomError> {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes)?;
    Ok(uuid_v4_from_bytes(bytes))
}

/// 32-bit FNV-1a over bytes.
pub fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

/// Longest llmName the protocol allows.
pub const LLM_NAME_MAX: usize = 64;
const LLM_NAME_PREFIX: usize = 55;

/// The LLM-facing name of a tool: `.` becomes `__`; a result longer than 64
/// characters keeps its first 55 characters, then `_` and the 8 lowercase hex
/// digits of the FNV-1a hash of the full name's UTF-8 bytes.
pub fn llm_name(name: &str) -> String {
    // `name.replace('.', "__")`, without its pattern searcher.
    let mut replaced = String::with_capacity(name.len());
    for c in name.chars() {
        if c == '.' {
            replaced.push_str("__");
        } else {
            replaced.push(c);
        }
    }
    // Characters counted by their first bytes, and the byte offset where
    // the 56th starts (plain loop: no `chars().count()`/`take().collect()`).
    let mut chars = 0;
    let mut cut = replaced.len();
    for (i, &b) in replaced.as_bytes().iter().enumerate() {
        if b & 0xc0 != 0x80 {
            if chars == LLM_NAME_PREFIX {
                cut = i;
            }
            chars += 1;
        }
    }
    if chars <= LLM_NAME_MAX {
        return replaced;
    }
    let mut out = String::with_capacity(LLM_NAME_MAX);
    out.push_str(replaced.get(..cut).unwrap_or_default());
    out.push('_');
    // `{:08x}`, without `core::fmt`'s padding.
    let hash = fnv1a_32(name.as_bytes());
    for shift in (0..8).rev() {
        let nibble = (hash >> (shift * 4)) & 0xf;
        out.push(char::from_digit(nibble, 16).unwrap_or('0'));
    }
    out
}

/// Longest full tool name.
pub const TOOL_NAME_MAX: usize = 128;

/// A full tool name: `^[A-Za-z0-9_.-]{1,128}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=TOOL_NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// An llmName: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_llm_name(name: &str) -> bool {
    (1..=LLM_NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_sets_version_and_variant() {
        assert_eq!(
            uuid_v4_from_bytes([0xff; 16]),
            "ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
        assert_eq!(
            uuid_v4_from_bytes([0; 16]),
            "00000000-0000-4000-8000-000000000000"
        );
        let bytes = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65,
            0x43, 0x21,
        ];
        assert_eq!(
            uuid_v4_from_bytes(bytes),
            "12345678-9abc-4ef0-8fed-cba987654321"
        );
    }

    struct Fixed(u8);
    impl RandomSource for Fixed {
        fn fill(&mut self, buf: &mut [u8]) -> Result<(), RandomError> {
            for b in buf.iter_mut() {
                *b = self.0;
                self.0 = self.0.wrapping_add(1);
            }
            Ok(())
        }
    }

    struct Broken;
    impl RandomSource for Broken {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), RandomError> {
            Err(RandomError("no crypto".into()))
        }
    }

    #[test]
    fn new_id_uses_the_injected_source() {
        let mut rng = Fixed(0);
        assert_eq!(
            new_id(&mut rng).ok().as_deref(),
            Some("00010203-0405-4607-8809-0a0b0c0d0e0f")
        );
        assert_eq!(
            new_id(&mut rng).ok().as_deref(),
            Some("10111213-1415-4617-9819-1a1b1c1d1e1f")
        );
        assert!(new_id(&mut Broken).is_err());
    }

    #[test]
    fn name_patterns() {
        assert!(is_valid_tool_name("signup.fill"));
        assert!(is_valid_tool_name("A-z_0.9"));
        assert!(is_valid_tool_name(&"a".repeat(128)));
        assert!(!is_valid_tool_name(&"a".repeat(129)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("sign up"));
        assert!(!is_valid_tool_name("naïve"));
        assert!(!is_valid_tool_name("a/b"));
        assert!(is_valid_llm_name("signup__fill"));
        assert!(!is_valid_llm_name("signup.fill"));
        assert!(!is_valid_llm_name(&"a".repeat(65)));
        assert!(!is_valid_llm_name(""));
        // Every llmName of a valid tool name is a valid llmName.
        assert!(is_valid_llm_name(&llm_name(&"a.".repeat(64))));
    }

    /// The straightforward formulation (`chars().count()`, `take().collect()`,
    /// `format!("{:08x}")`), as the oracle for the plain loop.
    fn llm_name_oracle(name: &str) -> String {
        // `name.replace('.', "__")` without its pattern searcher: `.` is one
        // byte, so whole characters are copied between the dots.
        let mut replaced = String::with_capacity(name.len());
        for piece in name.split_inclusive('.') {
            match piece.strip_suffix('.') {
                Some(before) => {
                    replaced.push_str(before);
                    replaced.push_str("__");
                }
                None => replaced.push_str(piece),
            }
        }
        if replaced.chars().count() <= LLM_NAME_MAX {
            return replaced;
        }
        let mut out: String = replaced.chars().take(LLM_NAME_PREFIX).collect();
        out.push('_');
        out.push_str(&format!("{:08x}", fnv1a_32(name.as_bytes())));
        out
    }

    #[test]
    fn llm_name_matches_the_char_based_oracle() {
        let pieces = ["a", ".", "é", "日", "😀", "_", "-", "z."];
        let mut state = 0x2545_f491_u32;
        for len in 0..200 {
            let mut name = String::new();
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                name.push_str(pieces[(state % 8) as usize]);
            }
            assert_eq!(llm_name(&name), llm_name_oracle(&name), "{name}");
        }
        for n in 50..70 {
            for tail in ["", "é", "😀", "."] {
                let name = format!("{}{tail}", "q".repeat(n));
                assert_eq!(llm_name(&name), llm_name_oracle(&name));
            }
        }
    }

    #[test]
    fn llm_name_hash_is_zero_padded_hex() {
        let mut small = 0;
        for i in 0..4000 {
            let name = format!("{}{i}", "z".repeat(70));
            let hash = fnv1a_32(name.as_bytes());
            small += usize::from(hash < 0x1000_0000);
            assert_eq!(llm_name(&name), format!("{}_{hash:08x}", "z".repeat(55)));
        }
        assert!(small > 0);
    }

    #[test]
    fn random_error_message_is_its_display() {
        let error = RandomError("no crypto".into());
        assert_eq!(error.message(), "random source failed: no crypto");
        assert_eq!(error.to_string(), error.message());
    }

    #[test]
    fn fnv1a_vectors() {
        // Published FNV-1a 32-bit test vectors.
        assert_eq!(fnv1a_32(b""), 0x811c9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c292c);
        assert_eq!(fnv1a_32(b"foobar"), 0xbf9cf968);
    }

    #[test]
    fn llm_name_short_names() {
        assert_eq!(llm_name("signup.fill"), "signup__fill");
        assert_eq!(llm_name("a.b.c"), "a__b__c");
        assert_eq!(llm_name("plain_name-1"), "plain_name-1");
        let exactly_64 = "x".repeat(64);
        assert_eq!(llm_name(&exactly_64), exactly_64);
    }

    #[test]
    fn llm_name_long_names_are_truncated_and_hashed() {
        let name = "y".repeat(65);
        let expected = format!("{}_{:08x}", "y".repeat(55), fnv1a_32(name.as_bytes()));
        assert_eq!(llm_name(&name), expected);
        assert_eq!(llm_name(&name).len(), 64);
        // The dots count after replacement: 32 dots become 64 chars + 1.
        let dotted = format!("{}a", ".".repeat(32));
        let got = llm_name(&dotted);
        assert_eq!(got.len(), 64);
        assert!(got.starts_with(&"_".repeat(55)));
        assert!(got.ends_with(&format!("_{:08x}", fnv1a_32(dotted.as_bytes()))));
        // Fixed vector, computed independently (Python).
        assert_eq!(
            llm_name("billing.invoices.line_items.adjustments.create_with_a_really_long_name"),
            "billing__invoices__line_items__adjustments__create_with_14142769"
        );
    }
}
