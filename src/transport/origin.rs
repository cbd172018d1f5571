//! Serialized origins (`scheme://host[:port]`) and URL authorities, parsed
//! strictly for what the transports need: the postMessage allow-list and
//! target, and the page origin Echo compares with.
//!
//! Not a URL parser. The `url` crate would do it fully, but costs about
//! 196 KB of wasm, 72 KB gzip (`url` 2.5.8 with `idna` 1.1, `opt-level =
//! "z"`, fat LTO, before wasm-opt: a `no_std` cdylib that parses a base,
//! joins a reference and serializes its origin, 197700 bytes, against the
//! same cdylib without it, 1236 bytes), where the whole shipped module is
//! 186 KB and over its gzip budget already. The rules here accept only
//! the exact form a browser serializes, and refuse anything else: a string
//! they accept is its own serialization, so an exact string comparison with
//! `event.origin` / `location.origin` is the origin comparison. They may
//! refuse an odd but valid spelling (an IDN in Unicode, an IPv4 in hex, a
//! host with `!` or `~`); they never accept a string that names another
//! origin. A host with `_` (a Docker Compose service name) is accepted:
//! browsers keep it as written, and it has no other spelling.
//! They do not decode a host's `xn--` labels: one the standard refuses as
//! an invalid international name (`xn--` alone, say) names no origin at
//! all, so no browser-given origin or `location.href` equals it.

use crate::prelude::*;

/// Schemes with a tuple origin and a default port (the WHATWG "special"
/// schemes but `file`, as the JS had them).
const SPECIAL: [(&str, u16); 5] = [
    ("http", 80),
    ("https", 443),
    ("ws", 80),
    ("wss", 443),
    ("ftp", 21),
];

/// The default port of a special scheme.
pub fn default_port(scheme: &str) -> Option<u16> {
    SPECIAL
        .iter()
        .find(|(name, _)| *name == scheme)
        .map(|(_, port)| *port)
}

/// Why a string is not a serialized origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginError {
    /// `'*'`: any origin.
    Wildcard,
    /// `'null'`: an opaque origin, shared by every sandboxed frame.
    Null,
    /// No `scheme://`, or a scheme with characters a scheme cannot have.
    MissingScheme,
    /// Nothing between `://` and the end (or the port).
    MissingHost,
    /// `user@` or `user:password@` before the host.
    Userinfo,
    /// A path, a trailing slash, or a backslash.
    Path,
    Query,
    Fragment,
    /// A port that is empty, not decimal, or over 65535.
    Port,
    /// A host character no serialized host has (anything but `a-z`, `0-9`,
    /// `-`, `.` and a bracketed IPv6 address), or an empty label.
    Host,
    /// A valid spelling that the browser serializes differently: upper case,
    /// the scheme's default port, a port with leading zeros, an IPv4 address
    /// not in dotted decimal, an IPv6 address not in its shortest form.
    NotCanonical,
}

impl OriginError {
    /// What is wrong, for an error text ("… not \"x\" (it has a path …)").
    pub fn reason(self) -> &'static str {
        match self {
            OriginError::Wildcard => "'*' matches any origin",
            OriginError::Null => "'null' is the opaque origin every sandboxed frame shares",
            OriginError::MissingScheme => "it has no scheme://",
            OriginError::MissingHost => "it has no host",
            OriginError::Userinfo => "it has userinfo (user@)",
            OriginError::Path => "it has a path or a trailing slash",
            OriginError::Query => "it has a query",
            OriginError::Fragment => "it has a fragment",
            OriginError::Port => "its port is not a number from 0 to 65535",
            OriginError::Host => "its host is not a lower-case ASCII host name or IP address",
            OriginError::NotCanonical => {
                "it is not in serialized form (lower case, no default port, no leading zeros, shortest IP form)"
            }
        }
    }
}

/// A host and port read from a URL authority (`host[:port]`, no userinfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort<'a> {
    /// As written (a bracketed IPv6 address keeps its brackets).
    pub host: &'a str,
    /// The port's digits as written, if a `:` was there (possibly empty).
    pub port: Option<&'a str>,
}

/// Splits `host[:port]`; `[v6]` hosts keep their brackets.
pub fn split_host_port(authority: &str) -> Result<HostPort<'_>, OriginError> {
    if authority.starts_with('[') {
        let end = authority.find(']').ok_or(OriginError::Host)?;
        let (host, rest) = authority
            .split_at_checked(end + 1)
            .ok_or(OriginError::Host)?;
        return match rest.strip_prefix(':') {
            Some(port) => Ok(HostPort {
                host,
                port: Some(port),
            }),
            None if rest.is_empty() => Ok(HostPort { host, port: None }),
            None => Err(OriginError::Host),
        };
    }
    Ok(match super::rsplit_once_ascii(authority, b':') {
        Some((host, port)) => HostPort {
            host,
            port: Some(port),
        },
        None => HostPort {
            host: authority,
            port: None,
        },
    })
}

/// A port's value: decimal digits only, at most 65535 (leading zeros
/// allowed here; [`parse_serialized_origin`] refuses them).
pub fn parse_port(digits: &str) -> Result<u16, OriginError> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OriginError::Port);
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > 5 {
        return Err(OriginError::Port);
    }
    let mut value: u32 = 0;
    for b in trimmed.bytes() {
        value = value * 10 + u32::from(b - b'0');
    }
    u16::try_from(value).map_err(|_| OriginError::Port)
}

/// Whether `scheme` has only scheme characters and starts with a letter.
pub fn is_scheme(scheme: &str) -> bool {
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// A serialized origin, checked: `scheme://host[:port]` exactly as a
/// browser serializes it. Returns it unchanged (borrowed) when it is one.
pub fn parse_serialized_origin(value: &str) -> Result<&str, OriginError> {
    match value {
        "*" => return Err(OriginError::Wildcard),
        "null" => return Err(OriginError::Null),
        _ => {}
    }
    // The first `:` ends the scheme (a scheme has none), then `//`.
    let (scheme, rest) = value.split_once(':').ok_or(OriginError::MissingScheme)?;
    let rest = rest.strip_prefix("//").ok_or(OriginError::MissingScheme)?;
    if !is_scheme(scheme) {
        return Err(OriginError::MissingScheme);
    }
    if scheme.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(OriginError::NotCanonical);
    }
    // The authority ends at the first of these; what follows is refused
    // by its kind.
    if let Some(end) = rest.find(['/', '\\', '?', '#']) {
        return Err(match rest.as_bytes().get(end) {
            Some(b'?') => OriginError::Query,
            Some(b'#') => OriginError::Fragment,
            _ => OriginError::Path,
        });
    }
    if rest.contains('@') {
        return Err(OriginError::Userinfo);
    }
    let HostPort { host, port } = split_host_port(rest)?;
    if host.is_empty() {
        return Err(OriginError::MissingHost);
    }
    let special = default_port(scheme);
    check_host(host, special.is_some())?;
    if let Some(digits) = port {
        let number = parse_port(digits)?;
        if (digits.len() > 1 && digits.starts_with('0')) || Some(number) == special {
            return Err(OriginError::NotCanonical);
        }
    }
    Ok(value)
}

/// A host in serialized form: a bracketed IPv6 address in its shortest
/// form, or dot-separated labels of `a-z0-9-_`; for special schemes a host
/// whose last label is a number must be a dotted-decimal IPv4 address (the
/// URL parser reads `1.2.3`, `0x7f.1` or `2130706433` as IPv4 and
/// reserializes them).
pub fn check_host(host: &str, special: bool) -> Result<(), OriginError> {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return check_ipv6(inner);
    }
    let mut last = "";
    for label in host.split('.') {
        if label.is_empty() {
            return Err(OriginError::Host);
        }
        for b in label.bytes() {
            if b.is_ascii_uppercase() {
                return Err(OriginError::NotCanonical);
            }
            if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_') {
                return Err(OriginError::Host);
            }
        }
        last = label;
    }
    if special && ends_in_number(last) {
        return check_ipv4(host);
    }
    Ok(())
}

/// The WHATWG "ends in a number" test on the last label.
fn ends_in_number(label: &str) -> bool {
    label.bytes().all(|b| b.is_ascii_digit())
        || label
            .strip_prefix("0x")
            .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn check_ipv4(host: &str) -> Result<(), OriginError> {
    let mut parts = 0;
    for part in host.split('.') {
        parts += 1;
        let canonical = !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part.len() == 1 || !part.starts_with('0'))
            && parse_port(part).is_ok_and(|n| n <= 255);
        if !canonical {
            return Err(OriginError::NotCanonical);
        }
    }
    if parts == 4 {
        Ok(())
    } else {
        Err(OriginError::NotCanonical)
    }
}

/// An IPv6 address (no brackets) in the form the URL serializer writes:
/// lower-case hex groups without leading zeros, the first longest run of
/// two or more zero groups as `::`, no embedded IPv4.
fn check_ipv6(text: &str) -> Result<(), OriginError> {
    let groups = parse_ipv6(text).ok_or(OriginError::Host)?;
    if serialize_ipv6(&groups) == text {
        Ok(())
    } else {
        Err(OriginError::NotCanonical)
    }
}

/// One to four hex digits (either case).
fn parse_group(group: &str) -> Option<u16> {
    if group.is_empty() || group.len() > 4 {
        return None;
    }
    group.bytes().try_fold(0u16, |value, b| {
        let digit = char::from(b).to_digit(16)?;
        Some((value << 4) | u16::try_from(digit).ok()?)
    })
}

fn parse_groups(part: &str) -> Option<Vec<u16>> {
    if part.is_empty() {
        return Some(Vec::new());
    }
    part.split(':').map(parse_group).collect()
}

fn parse_ipv6(text: &str) -> Option<[u16; 8]> {
    // Byte search, not `split_once("::")`: a string searcher is 2 KB of wasm.
    let gap = text.as_bytes().windows(2).position(|pair| pair == b"::");
    let (head, tail) = match gap {
        Some(at) => (
            parse_groups(text.get(..at)?)?,
            Some(parse_groups(text.get(at + 2..)?)?),
        ),
        None => (parse_groups(text)?, None),
    };
    match tail {
        None => head.as_slice().try_into().ok(),
        Some(tail) if head.len() + tail.len() <= 7 => {
            let mut out = [0u16; 8];
            for (slot, group) in out.iter_mut().zip(&head) {
                *slot = *group;
            }
            for (slot, group) in out.iter_mut().rev().zip(tail.iter().rev()) {
                *slot = *group;
            }
            Some(out)
        }
        _ => None,
    }
}

/// `group` in lower-case hex without leading zeros.
fn push_hex(out: &mut String, group: u16) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut started = false;
    for shift in [12u16, 8, 4, 0] {
        let digit = usize::from((group >> shift) & 0xf);
        if digit != 0 || started || shift == 0 {
            started = true;
            out.push(char::from(DIGITS.get(digit).copied().unwrap_or(b'0')));
        }
    }
}

fn serialize_ipv6(groups: &[u16; 8]) -> String {
    // The first longest run of zero groups, if at least 2 long.
    let (mut best, mut best_len, mut run, mut run_len) = (0, 0, 0, 0);
    for (i, &g) in groups.iter().enumerate() {
        if g == 0 {
            if run_len == 0 {
                run = i;
            }
            run_len += 1;
            if run_len > best_len {
                best = run;
                best_len = run_len;
            }
        } else {
            run_len = 0;
        }
    }
    let mut out = String::new();
    let mut i = 0;
    while i < 8 {
        if best_len >= 2 && i == best {
            out.push_str(if i == 0 { "::" } else { ":" });
            i += best_len;
            continue;
        }
        push_hex(&mut out, groups.get(i).copied().unwrap_or(0));
        if i < 7 {
            out.push(':');
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialized_origins_are_accepted_as_they_are() {
        for ok in [
            "https://app.example",
            "http://localhost:8080",
            "https://a-b.c1.example:8443",
            "http://127.0.0.1",
            "http://127.0.0.1:3000",
            "https://[::1]",
            "https://[2001:db8::1]:8443",
            "http://[1::2:0:0:3:0]",
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
            "moz-extension://0b7d1f3e-2c4a-4b6d-9e8f-1a2b3c4d5e6f",
            "foo://1.2.3",
            "http://xn--bcher-kva.example",
            "http://a:0",
            "http://agent_svc:8080",
            "https://app_1.example",
        ] {
            assert_eq!(parse_serialized_origin(ok), Ok(ok), "{ok}");
        }
    }

    #[test]
    fn everything_else_is_refused_with_its_reason() {
        use OriginError::*;
        for (bad, why) in [
            ("*", Wildcard),
            ("null", Null),
            ("app.example", MissingScheme),
            ("//app.example", MissingScheme),
            ("https:app.example", MissingScheme),
            ("1http://a.example", MissingScheme),
            ("https://", MissingHost),
            ("https://:8080", MissingHost),
            ("https://app.example/", Path),
            ("https://app.example/x", Path),
            ("https://app.example\\", Path),
            ("https://app.example?x", Query),
            ("https://app.example#x", Fragment),
            ("https://user@app.example", Userinfo),
            ("https://user:pw@app.example", Userinfo),
            ("https://app.example:", Port),
            ("https://app.example:x", Port),
            ("https://app.example:65536", Port),
            ("https://app..example", Host),
            ("https://app.example.", Host),
            ("https://app!1.example", Host),
            ("https://app~1.example", Host),
            ("https://bücher.example", Host),
            ("https://%61pp.example", Host),
            ("https://[::1", Host),
            ("https://[::1]x", Host),
            ("https://[1:2:3:4:5:6:7:8:9]", Host),
            // `::` stands for one zero group at least.
            ("https://[1:2:3:4::5:6:7:8]", Host),
            ("https://[::1:2:3:4:5:6:7:8]", Host),
            ("https://[::ffff:1.2.3.4]", Host),
            ("HTTPS://app.example", NotCanonical),
            ("https://App.example", NotCanonical),
            ("https://app.example:443", NotCanonical),
            ("http://app.example:80", NotCanonical),
            ("ws://app.example:80", NotCanonical),
            ("https://app.example:0443", NotCanonical),
            ("https://app.example:08443", NotCanonical),
            ("http://1.2.3", NotCanonical),
            ("http://0x7f.0.0.1", NotCanonical),
            ("http://2130706433", NotCanonical),
            ("http://127.000.0.1", NotCanonical),
            ("http://256.0.0.1", NotCanonical),
            ("http://a.1", NotCanonical),
            ("https://[0:0::1]", NotCanonical),
            ("https://[::0001]", NotCanonical),
            ("https://[::A]", NotCanonical),
            ("https://[1:0:0:2:0:0:0:3]", NotCanonical),
        ] {
            assert_eq!(parse_serialized_origin(bad), Err(why), "{bad}");
        }
    }

    #[test]
    fn ipv6_serialization_follows_the_url_standard() {
        let cases = [
            ([0, 0, 0, 0, 0, 0, 0, 1], "::1"),
            ([0, 0, 0, 0, 0, 0, 0, 0], "::"),
            ([1, 0, 0, 2, 0, 0, 0, 3], "1:0:0:2::3"),
            ([1, 0, 0, 2, 3, 0, 0, 4], "1::2:3:0:0:4"),
            ([1, 2, 3, 4, 5, 6, 7, 0], "1:2:3:4:5:6:7:0"),
            ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], "2001:db8::"),
        ];
        for (groups, text) in cases {
            assert_eq!(serialize_ipv6(&groups), text);
            assert_eq!(parse_ipv6(text), Some(groups), "{text}");
        }
        assert_eq!(parse_ipv6("1::2::3"), None);
        assert_eq!(parse_ipv6(":1"), None);
    }

    #[test]
    fn ports_and_default_ports() {
        assert_eq!(parse_port("0080"), Ok(80));
        assert_eq!(parse_port("65535"), Ok(65535));
        assert_eq!(parse_port("000000000065535"), Ok(65535));
        assert_eq!(parse_port("65536"), Err(OriginError::Port));
        assert_eq!(parse_port("+1"), Err(OriginError::Port));
        assert_eq!(default_port("wss"), Some(443));
        assert_eq!(default_port("chrome-extension"), None);
        for reason in [
            OriginError::Path,
            OriginError::Wildcard,
            OriginError::NotCanonical,
        ] {
            assert!(!reason.reason().is_empty());
        }
    }
}
