//! Demo accounts: a login sets a session cookie for a user, and each user
//! owns conversations. Sockets are authorized against both (Security MUST 1).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use axum::http::{header, HeaderMap, StatusCode};

use crate::protocol::new_id;
use crate::store::ConvKey;

pub const SESSION_COOKIE: &str = "toolmark_session";
/// Laravel's CSRF cookie, which `echoTransport`'s `headers()` sends back as
/// `X-XSRF-TOKEN` (double submit, bound to the session here).
pub const XSRF_COOKIE: &str = "XSRF-TOKEN";

#[derive(Default)]
struct Session {
    user: String,
    xsrf: String,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Session>,
    /// conversation id → owner, newest last per user in `latest`.
    conversations: HashMap<String, String>,
    latest: HashMap<String, String>,
}

#[derive(Default)]
pub struct Accounts {
    inner: Mutex<Inner>,
}

/// A user name for the demo: 1–32 of `[A-Za-z0-9_-]`.
pub fn valid_user(user: &str) -> bool {
    (1..=32).contains(&user.len())
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Accounts {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new session for `user` and a new conversation it owns: the
    /// session token (the cookie's value) and the conversation id.
    pub fn login(&self, user: &str) -> (String, String) {
        let token = new_id();
        let conversation = new_id();
        let mut inner = self.lock();
        let session = Session {
            user: user.to_owned(),
            xsrf: new_id(),
        };
        inner.sessions.insert(token.clone(), session);
        inner
            .conversations
            .insert(conversation.clone(), user.to_owned());
        inner.latest.insert(user.to_owned(), conversation.clone());
        (token, conversation)
    }

    /// The user of the request's session cookie.
    pub fn user(&self, headers: &HeaderMap) -> Option<String> {
        let token = cookie(headers, SESSION_COOKIE)?;
        self.lock()
            .sessions
            .get(token)
            .map(|session| session.user.clone())
    }

    /// The session's CSRF token (the `XSRF-TOKEN` cookie's value).
    pub fn xsrf_token(&self, session_token: &str) -> Option<String> {
        self.lock()
            .sessions
            .get(session_token)
            .map(|session| session.xsrf.clone())
    }

    /// Whether the request's `X-XSRF-TOKEN` header is its session's token.
    pub fn xsrf_matches(&self, headers: &HeaderMap) -> bool {
        let expected = cookie(headers, SESSION_COOKIE).and_then(|token| self.xsrf_token(token));
        let sent = headers
            .get("x-xsrf-token")
            .and_then(|value| value.to_str().ok());
        matches!((expected, sent), (Some(expected), Some(sent)) if expected == sent)
    }

    /// Whether `user` owns `conversation`.
    pub fn owns(&self, user: &str, conversation: &str) -> bool {
        self.lock()
            .conversations
            .get(conversation)
            .is_some_and(|owner| owner == user)
    }

    /// The user's newest conversation.
    pub fn latest_conversation(&self, user: &str) -> Option<String> {
        self.lock().latest.get(user).cloned()
    }

    /// Authorizes a request for a conversation: 401 without a known
    /// session, 403 when the conversation is not the session user's.
    pub fn authorize(
        &self,
        headers: &HeaderMap,
        conversation: &str,
    ) -> Result<ConvKey, StatusCode> {
        let user = self.user(headers).ok_or(StatusCode::UNAUTHORIZED)?;
        match self.lock().conversations.get(conversation) {
            Some(owner) if *owner == user => Ok(ConvKey {
                user,
                conversation: conversation.to_owned(),
            }),
            _ => Err(StatusCode::FORBIDDEN),
        }
    }
}

fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The session cookie: not readable by scripts, not sent cross-site.
pub fn session_cookie(token: &str) -> String {
    format!("{SESSION_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/")
}

/// The CSRF cookie: readable by the page's script, which echoes it.
pub fn xsrf_cookie(token: &str) -> String {
    format!("{XSRF_COOKIE}={token}; SameSite=Strict; Path=/")
}
