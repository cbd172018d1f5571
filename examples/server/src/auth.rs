//! Demo accounts: a login sets a session cookie for a user, and each user
//! owns conversations. Sockets are authorized against both (Security MUST 1).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use axum::http::{header, HeaderMap, StatusCode};

use crate::protocol::new_id;
use crate::store::ConvKey;

pub const SESSION_COOKIE: &str = "toolmark_session";

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, String>,
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
        inner.sessions.insert(token.clone(), user.to_owned());
        inner
            .conversations
            .insert(conversation.clone(), user.to_owned());
        inner.latest.insert(user.to_owned(), conversation.clone());
        (token, conversation)
    }

    /// The user of the request's session cookie.
    pub fn user(&self, headers: &HeaderMap) -> Option<String> {
        let token = session_token(headers)?;
        self.lock().sessions.get(token).cloned()
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

fn session_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
}

/// The session cookie: not readable by scripts, not sent cross-site.
pub fn session_cookie(token: &str) -> String {
    format!("{SESSION_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/")
}
