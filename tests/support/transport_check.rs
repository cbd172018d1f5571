//! The transports' URL and origin rules against the `url` crate (the WHATWG
//! URL standard, as browsers parse): for any text, nothing panics, and
//! whatever the rules accept, the standard agrees with.
//!
//! - `parse_serialized_origin` accepts only an origin exactly as a browser
//!   serializes it: the standard parses it to that same origin.
//! - `PageUrl::parse` (Echo reads `location.href`) finds the origin the
//!   standard finds.
//! - `resolve_post_url` accepts a `postUrl` only when the standard resolves
//!   it against the page to a URL on the page's origin (the same-origin rule
//!   of `echoTransport`), and the URL it gives is on that origin too.
//!
//! The first byte picks the rule; the rest is split at the first newline
//! into the page URL and the text checked (`postUrl` or origin).

use toolmark_bridge::transport::echo::{resolve_post_url, PageUrl};
use toolmark_bridge::transport::origin::parse_serialized_origin;
use url::{Origin, Url};

/// The origin a browser gives a URL: the standard's tuple origin; for a
/// scheme the standard leaves opaque, the scheme, host and port as browsers
/// serialize extension pages' origins (`chrome-extension://id`,
/// `moz-extension://uuid`), which `allowedOrigins` must be able to name.
fn origin_of(url: &Url) -> String {
    match url.origin() {
        Origin::Tuple(..) => url.origin().ascii_serialization(),
        Origin::Opaque(_) => {
            let port = url
                .port()
                .map(|port| format!(":{port}"))
                .unwrap_or_default();
            format!(
                "{}://{}{port}",
                url.scheme(),
                url.host_str().unwrap_or_default()
            )
        }
    }
}

/// The `url` crate (2.5) fails `///host/x` against an http(s) base with
/// "empty host", where the standard's "special authority ignore slashes
/// state" skips every `/` and `\` after the first two (browsers and Node
/// resolve it to `https://host/x`): the same URL with two slashes.
fn joined_ignoring_slashes(base: &Url, post_url: &str) -> Option<Url> {
    // The standard's input cleanup first: ends trimmed, tabs and newlines gone.
    let trimmed: String = post_url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let rest = trimmed.trim_start_matches(['/', '\\']);
    (trimmed.len() - rest.len() > 2).then(|| base.join(&format!("//{rest}")).ok())?
}

/// The standard refuses a host with an `xn--` label that is not a valid
/// international name (`xn--` alone, Punycode that decodes to a code point
/// UTS 46 disallows, …). The rules do not check Punycode: that needs UTS
/// 46's tables, most of the `url` crate's 72 KB gzip. Such a host names no
/// origin, so a browser never serializes one (no `location.href`,
/// `event.origin` or `location.origin` holds it), and accepting it cannot
/// make two origins compare equal. The rules accept only ASCII hosts, so
/// an IDNA error on one they accept comes from such a label (looked for
/// as the standard reads the text: tabs and newlines removed).
fn invalid_international_name(error: &url::ParseError, text: &str) -> bool {
    let read: String = text
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    *error == url::ParseError::IdnaError && read.to_ascii_lowercase().contains("xn--")
}

pub fn check_transport(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match mode % 3 {
        0 => {
            if let Ok(origin) = parse_serialized_origin(&text) {
                assert_eq!(origin, &*text, "accepted but not returned unchanged");
                let parsed = match Url::parse(origin) {
                    Ok(parsed) => parsed,
                    Err(e) if invalid_international_name(&e, origin) => return,
                    Err(e) => panic!("accepted {origin:?}, the standard fails: {e}"),
                };
                assert_eq!(
                    origin_of(&parsed),
                    origin,
                    "accepted {origin:?}, which the standard serializes otherwise"
                );
            }
        }
        1 => {
            if let Some(page) = PageUrl::parse(&text) {
                let parsed = match Url::parse(&text) {
                    Ok(parsed) => parsed,
                    Err(e) if invalid_international_name(&e, &text) => return,
                    Err(e) => panic!("read {text:?} as a page, the standard fails: {e}"),
                };
                assert_eq!(page.origin(), origin_of(&parsed), "page origin of {text:?}");
            }
        }
        _ => {
            let (href, post_url) = text.split_once('\n').unwrap_or((&text, ""));
            let Some(page) = PageUrl::parse(href) else {
                return;
            };
            let Ok(resolved) = resolve_post_url(post_url, &page) else {
                return;
            };
            let base = match Url::parse(href) {
                Ok(base) => base,
                Err(e) if invalid_international_name(&e, href) => return,
                Err(e) => panic!("read {href:?} as a page, the standard fails: {e}"),
            };
            let standard = match base
                .join(post_url)
                .or_else(|e| joined_ignoring_slashes(&base, post_url).ok_or(e))
            {
                Ok(standard) => standard,
                Err(e) if invalid_international_name(&e, post_url) => return,
                Err(e) => {
                    panic!("accepted postUrl {post_url:?} on {href:?}, the standard fails: {e}")
                }
            };
            assert_eq!(
                origin_of(&standard),
                page.origin(),
                "accepted postUrl {post_url:?} on {href:?}, which the standard resolves to {standard}"
            );
            let ours = Url::parse(&resolved)
                .unwrap_or_else(|e| panic!("resolved {post_url:?} to {resolved:?}: {e}"));
            assert_eq!(origin_of(&ours), page.origin(), "resolved to {resolved:?}");
        }
    }
}
