//! The Echo mode: the page's `echoTransport` posts its messages to
//! `POST /toolmark/bridge` and listens on the private channel
//! `toolmark.{user}.{conversation}` through a Pusher-protocol server
//! (soketi); the server authorizes that channel (`POST /broadcasting/auth`)
//! and publishes agent → page messages through the Pusher HTTP API.
//!
//! Inbound posts go through the same [`crate::hub::Hub`] checks as socket
//! frames. Every instance can take a page's posts, so several instances
//! share the [`crate::store::SessionStore`]; that is how a deployment grows
//! past one server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use serde_json::json;
use sha2::Sha256;
use tokio::sync::mpsc;

use crate::store::ConvKey;

/// The event name the page listens for (`echoTransport`'s default
/// `.toolmark.message`: the leading dot means "no namespace").
pub const EVENT: &str = "toolmark.message";

/// The Pusher app the server publishes through.
#[derive(Clone, Debug)]
pub struct EchoConfig {
    pub app_id: String,
    pub key: String,
    pub secret: String,
    /// The HTTP API's base URL, e.g. `http://127.0.0.1:6001` for soketi.
    pub api_url: String,
}

impl EchoConfig {
    /// `PUSHER_APP_ID`, `PUSHER_APP_KEY`, `PUSHER_APP_SECRET`, `PUSHER_URL`,
    /// when all are set.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Some(Self {
            app_id: var("PUSHER_APP_ID")?,
            key: var("PUSHER_APP_KEY")?,
            secret: var("PUSHER_APP_SECRET")?,
            api_url: var("PUSHER_URL")?,
        })
    }
}

/// The Pusher name of the conversation's private channel (what
/// `echo.private("toolmark.{user}.{conversation}")` subscribes to).
pub fn channel_name(key: &ConvKey) -> String {
    format!("private-toolmark.{}.{}", key.user, key.conversation)
}

fn hmac_hex(secret: &str, text: &str) -> String {
    // HMAC takes a key of any length.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(text.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The `auth` string for a private channel: `key:HMAC-SHA256(socket_id:channel)`.
pub fn channel_auth(key: &str, secret: &str, socket_id: &str, channel: &str) -> String {
    format!(
        "{key}:{}",
        hmac_hex(secret, &format!("{socket_id}:{channel}"))
    )
}

/// A Pusher socket id: two runs of digits joined by a dot.
pub fn valid_socket_id(socket_id: &str) -> bool {
    socket_id.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.len() <= 20
            && b.len() <= 20
            && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    })
}

/// The signed HTTP API request that triggers `event` with `data` on
/// `channel`: the path with its query, and the body.
pub fn events_request(
    config: &EchoConfig,
    channel: &str,
    data: &str,
    timestamp: u64,
) -> (String, String) {
    let body = json!({ "name": EVENT, "channels": [channel], "data": data }).to_string();
    signed_events_request(config, &body, timestamp)
}

fn signed_events_request(config: &EchoConfig, body: &str, timestamp: u64) -> (String, String) {
    let path = format!("/apps/{}/events", config.app_id);
    let body_md5 = hex::encode(Md5::digest(body.as_bytes()));
    // Parameters in key order, as the signature requires.
    let query = format!(
        "auth_key={}&auth_timestamp={timestamp}&auth_version=1.0&body_md5={body_md5}",
        config.key
    );
    let signature = hmac_hex(&config.secret, &format!("POST\n{path}\n{query}"));
    (
        format!("{path}?{query}&auth_signature={signature}"),
        body.to_owned(),
    )
}

/// Publishes agent → page frames, in order per conversation.
pub struct Echo {
    pub config: EchoConfig,
    http: ureq::Agent,
    publishers: Mutex<HashMap<ConvKey, mpsc::UnboundedSender<String>>>,
}

impl Echo {
    pub fn new(config: EchoConfig) -> Arc<Self> {
        let http = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .build()
            .into();
        Arc::new(Self {
            config,
            http,
            publishers: Mutex::default(),
        })
    }

    /// The sender whose frames reach the conversation's channel, one after
    /// another (a call before its cancel).
    pub fn publisher(self: &Arc<Self>, key: &ConvKey) -> mpsc::UnboundedSender<String> {
        let mut publishers = self.publishers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = publishers.get(key).filter(|tx| !tx.is_closed()) {
            return tx.clone();
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let echo = Arc::clone(self);
        let channel = channel_name(key);
        tokio::spawn(async move {
            while let Some(frame) = rx.recv().await {
                let echo = Arc::clone(&echo);
                let to = channel.clone();
                let sent = tokio::task::spawn_blocking(move || echo.publish(&to, &frame)).await;
                if let Ok(Err(error)) = sent {
                    eprintln!("toolmark: publishing to {channel} failed: {error}");
                }
            }
        });
        publishers.insert(key.clone(), tx.clone());
        tx
    }

    fn publish(&self, channel: &str, frame: &str) -> Result<(), String> {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs())
            .unwrap_or(0);
        let (path, body) = events_request(&self.config, channel, frame, timestamp);
        let url = format!("{}{path}", self.config.api_url.trim_end_matches('/'));
        let response = self
            .http
            .post(&url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(|error| error.to_string())?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {}", response.status()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The worked examples of Pusher's library auth reference.
    const KEY: &str = "278d425bdf160c739803";
    const SECRET: &str = "7ad3773142a6692b25b8";

    #[test]
    fn private_channel_auth_matches_the_reference_example() {
        assert_eq!(
            channel_auth(KEY, SECRET, "1234.1234", "private-foobar"),
            "278d425bdf160c739803:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4"
        );
        assert!(valid_socket_id("1234.1234"));
        assert!(!valid_socket_id("1234.1234:private-other"));
    }

    #[test]
    fn http_api_signature_matches_the_reference_example() {
        let config = EchoConfig {
            app_id: "3".into(),
            key: KEY.into(),
            secret: SECRET.into(),
            api_url: String::new(),
        };
        let body = r#"{"name":"foo","channels":["project-3"],"data":"{\"some\":\"data\"}"}"#;
        let (path, _) = signed_events_request(&config, body, 1353088179);
        assert_eq!(
            path,
            "/apps/3/events?auth_key=278d425bdf160c739803&auth_timestamp=1353088179&auth_version=1.0&body_md5=ec365a775a4cd0599faeb73354201b6f&auth_signature=da454824c97ba181a32ccc17a72625ba02771f50b50e1e7430e47a1f3f457e6c"
        );
        let (_, body) = events_request(&config, "private-toolmark.ada.c", r#"{"protocol":1}"#, 1);
        assert_eq!(
            body,
            r#"{"name":"toolmark.message","channels":["private-toolmark.ada.c"],"data":"{\"protocol\":1}"}"#
        );
    }
}
