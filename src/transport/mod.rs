//! Transport policies: the decisions of each bridge transport, sans IO.
//!
//! Each module owns one transport's rules (schedules, buffers, limits,
//! origin checks, request shapes) as plain state machines and functions:
//! no socket, no window, no fetch, no timer, no clock (time comes in as
//! ms). A web-sys driver in `src/wasm/` owns the JS objects and
//! their listeners, reports events with `handle_*` and carries out what the
//! policy hands back (`poll_*`, return values). Each module's first lines
//! say what it decides and what its driver does.
//!
//! - [`websocket`]: reconnect schedule, outgoing buffer, held inbound, frame limit.
//! - [`post_message`]: origin allow-list, target origin, envelope.
//! - [`echo`]: same-origin `postUrl`, broadcast payloads, the POST request, send failures.
//! - [`status`]: the connection states every transport reports, and what a bridge makes of them.
//! - [`origin`]: serialized origins and URL authorities, parsed strictly (shared).
//!
//! The in-page channel has no policy of its own: both ends live in one JS
//! realm and nothing is filtered.

pub mod echo;
pub mod origin;
pub mod post_message;
pub mod status;
pub mod websocket;

/// `text.rsplit_once(byte)` for an ASCII byte, by a byte search: `char`'s
/// reverse searcher is 0.7 KB of the module for these few calls.
pub(crate) fn rsplit_once_ascii(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().rposition(|b| b == byte)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::rsplit_once_ascii;

    #[test]
    fn rsplit_once_ascii_is_rsplit_once() {
        for text in ["", "a", ":", "a:b", "a:b:c", "::", "é:ü", "[::1]:80", "ü"] {
            assert_eq!(
                rsplit_once_ascii(text, b':'),
                text.rsplit_once(':'),
                "{text:?}"
            );
        }
    }
}
