//! HTTP and WebSocket endpoints (the interface is listed in README.md).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Form, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::{Json, Router};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::broadcast::error::RecvError;
use tower_http::services::ServeDir;

use crate::auth::{session_cookie, valid_user, xsrf_cookie, Accounts};
use crate::echo::{channel_auth, valid_socket_id, Echo};
use crate::hub::Hub;
use crate::protocol::MAX_INBOUND_BYTES;
use crate::store::ConvKey;

/// Longest chat line the server takes.
const MAX_CHAT_CHARS: usize = 4000;

pub struct AppState {
    pub hub: Arc<Hub>,
    pub accounts: Arc<Accounts>,
    /// The Echo mode's publisher, when a Pusher app is configured.
    pub echo: Option<Arc<Echo>>,
}

pub fn router(state: Arc<AppState>, static_dir: Option<PathBuf>) -> Router {
    let router = Router::new()
        .route("/api/login", post(login))
        .route("/api/session", get(session))
        .route("/api/transcript", get(transcript))
        .route(
            "/toolmark/ws",
            conversation_socket(MAX_INBOUND_BYTES, page_socket),
        )
        .route("/chat/ws", conversation_socket(64 * 1024, chat_socket))
        .route("/broadcasting/auth", post(broadcasting_auth))
        .route(
            "/toolmark/bridge",
            post(bridge_post).layer(DefaultBodyLimit::max(MAX_INBOUND_BYTES)),
        )
        .with_state(state);
    match static_dir {
        Some(dir) => router.fallback_service(ServeDir::new(dir)),
        None => router,
    }
}

/// Answers only requests whose `Host` names this machine on `addr`'s port
/// (127.0.0.1, localhost, [::1], or `addr` itself, e.g. 127.0.0.2): for a
/// server on loopback. A site whose
/// name an attacker points at 127.0.0.1 (DNS rebinding) is same-origin with
/// what it loads from there, Origin and Host both its own name, so the
/// Origin check cannot tell it from the demo page; the name in Host can.
pub fn local_hosts_only(router: Router, addr: SocketAddr) -> Router {
    let allowed: Arc<[String]> = local_hosts(addr).into();
    router.layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let allowed = Arc::clone(&allowed);
            async move {
                let host = request
                    .headers()
                    .get(header::HOST)
                    .and_then(|host| host.to_str().ok());
                let known = host
                    .is_some_and(|host| allowed.iter().any(|name| name.eq_ignore_ascii_case(host)));
                if known {
                    next.run(request).await
                } else {
                    (
                        StatusCode::FORBIDDEN,
                        "this server answers only for 127.0.0.1, localhost, [::1] and the address it listens on",
                    )
                        .into_response()
                }
            }
        },
    ))
}

/// The `Host` values that name this machine on `addr`'s port: with the
/// port, and without it on port 80 (a browser leaves a scheme's default
/// port out).
fn local_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let own = match addr.ip() {
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let mut names = vec!["127.0.0.1".to_owned(), "localhost".into(), "[::1]".into()];
    if !names.contains(&own) {
        names.push(own);
    }
    let with_port = names.iter().map(|name| format!("{name}:{port}"));
    let hosts: Vec<String> = with_port.collect();
    if port == 80 {
        [hosts, names].concat()
    } else {
        hosts
    }
}

/// Serves `router` on `listener` in a task; returns its address.
pub async fn spawn(listener: TcpListener, router: Router) -> std::io::Result<SocketAddr> {
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            eprintln!("toolmark: server stopped: {error}");
        }
    });
    Ok(addr)
}

#[derive(Deserialize)]
struct LoginBody {
    user: String,
}

async fn login(State(state): State<Arc<AppState>>, Json(body): Json<LoginBody>) -> Response {
    if !valid_user(&body.user) {
        return (StatusCode::BAD_REQUEST, "user: 1-32 of A-Z a-z 0-9 _ -").into_response();
    }
    let (token, conversation) = state.accounts.login(&body.user);
    let xsrf = state.accounts.xsrf_token(&token).unwrap_or_default();
    (
        AppendHeaders([
            (header::SET_COOKIE, session_cookie(&token)),
            (header::SET_COOKIE, xsrf_cookie(&xsrf)),
        ]),
        Json(json!({ "user": body.user, "conversation": conversation })),
    )
        .into_response()
}

/// The session of the cookie; 204 without one (a page's first visit asks
/// this before signing in: not an error, so no 401 in its console).
async fn session(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let Some(user) = state.accounts.user(&headers) else {
        return StatusCode::NO_CONTENT.into_response();
    };
    let conversation = state.accounts.latest_conversation(&user);
    Json(json!({ "user": user, "conversation": conversation })).into_response()
}

#[derive(Deserialize)]
struct ConversationQuery {
    conversation: String,
}

async fn transcript(
    State(state): State<Arc<AppState>>,
    Query(query): Query<ConversationQuery>,
    headers: HeaderMap,
) -> Response {
    match state.accounts.authorize(&headers, &query.conversation) {
        Ok(key) => Json(json!({ "entries": state.hub.transcript(&key) })).into_response(),
        Err(status) => status.into_response(),
    }
}

/// A cookie-authenticated socket must come from a page of this origin
/// (no cross-site WebSocket hijacking). Clients that are not browsers send
/// no Origin.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(Ok(host))) = (
        origin.to_str(),
        headers.get(header::HOST).map(|host| host.to_str()),
    ) else {
        return false;
    };
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        == Some(host)
}

/// Authenticates a socket before it is upgraded: the session cookie's user
/// must own the conversation.
fn authorize_socket(
    state: &AppState,
    headers: &HeaderMap,
    conversation: &str,
) -> Result<ConvKey, StatusCode> {
    if !same_origin(headers) {
        return Err(StatusCode::FORBIDDEN);
    }
    state.accounts.authorize(headers, conversation)
}

/// The route of a conversation's socket: authorized before the upgrade, its
/// messages at most `max_message_size` bytes, then served by `serve`.
fn conversation_socket<Serve, Served>(
    max_message_size: usize,
    serve: Serve,
) -> MethodRouter<Arc<AppState>>
where
    Serve: FnOnce(Arc<Hub>, ConvKey, WebSocket) -> Served + Clone + Send + Sync + 'static,
    Served: Future<Output = ()> + Send + 'static,
{
    get(
        move |State(state): State<Arc<AppState>>,
              Query(query): Query<ConversationQuery>,
              headers: HeaderMap,
              upgrade: WebSocketUpgrade| async move {
            match authorize_socket(&state, &headers, &query.conversation) {
                Ok(key) => {
                    let hub = Arc::clone(&state.hub);
                    upgrade
                        .max_message_size(max_message_size)
                        .on_upgrade(move |socket| serve(hub, key, socket))
                }
                Err(status) => status.into_response(),
            }
        },
    )
}

async fn page_socket(hub: Arc<Hub>, key: ConvKey, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (mut page, mut frames) = hub.page_opened(key);
    let writer = tokio::spawn(async move {
        while let Some(frame) = frames.recv().await {
            if sink.send(WsMessage::Text(frame.into())).await.is_err() {
                break;
            }
        }
    });
    while let Some(Ok(message)) = stream.next().await {
        match message {
            WsMessage::Text(text) => hub.page_frame(&mut page, text.as_str()),
            WsMessage::Close(_) => break,
            // Binary frames are not protocol messages.
            _ => {}
        }
    }
    hub.page_closed(page);
    writer.abort();
}

async fn chat_socket(hub: Arc<Hub>, key: ConvKey, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (history, mut entries) = hub.subscribe(&key);
    let mut page_tools = hub.watch_page_tools(&key);
    page_tools.mark_changed();
    let hello = json!({ "type": "history", "entries": history }).to_string();
    if sink.send(WsMessage::Text(hello.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            changed = page_tools.changed() => {
                if changed.is_err() {
                    break;
                }
                let mut frame = page_tools.borrow_and_update().clone();
                frame["type"] = json!("page");
                let frame = frame.to_string();
                if sink.send(WsMessage::Text(frame.into())).await.is_err() {
                    break;
                }
            }
            entry = entries.recv() => match entry {
                Ok(entry) => {
                    let frame = json!({ "type": "entry", "entry": entry }).to_string();
                    if sink.send(WsMessage::Text(frame.into())).await.is_err() {
                        break;
                    }
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            },
            message = stream.next() => match message {
                Some(Ok(WsMessage::Text(text))) => {
                    if let Some(line) = chat_line(text.as_str()) {
                        hub.say(&key, line);
                    }
                }
                Some(Ok(WsMessage::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// `{"type":"say","text":"…"}` → the line, when it is one.
fn chat_line(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("say") {
        return None;
    }
    let line = value.get("text").and_then(Value::as_str)?.trim();
    (!line.is_empty() && line.chars().count() <= MAX_CHAT_CHARS).then(|| line.to_owned())
}

#[derive(Deserialize)]
struct ChannelAuthRequest {
    socket_id: String,
    channel_name: String,
}

/// Pusher private-channel authorization (what Laravel Echo posts): only
/// `private-toolmark.{user}.{conversation}` for the session's own user and
/// a conversation that user owns.
async fn broadcasting_auth(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Form(request): Form<ChannelAuthRequest>,
) -> Response {
    let Some(echo) = &state.echo else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Some(user) = state.accounts.user(&headers) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let allowed = request
        .channel_name
        .strip_prefix("private-toolmark.")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(owner, conversation)| {
            owner == user && state.accounts.owns(&user, conversation)
        });
    if !allowed || !valid_socket_id(&request.socket_id) {
        return StatusCode::FORBIDDEN.into_response();
    }
    let auth = channel_auth(
        &echo.config.key,
        &echo.config.secret,
        &request.socket_id,
        &request.channel_name,
    );
    Json(json!({ "auth": auth })).into_response()
}

/// `echoTransport`'s outbound: one protocol message per POST, from the
/// session's user, for a conversation the user owns, with the session's
/// CSRF token. Accepted posts answer 204 whether or not the hub rejects the
/// message (as a socket frame would be dropped).
async fn bridge_post(
    State(state): State<Arc<AppState>>,
    Query(query): Query<ConversationQuery>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let Some(echo) = &state.echo else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let key = match state.accounts.authorize(&headers, &query.conversation) {
        Ok(key) => key,
        Err(status) => return status.into_response(),
    };
    if !state.accounts.xsrf_matches(&headers) {
        // Laravel's answer to a CSRF token mismatch.
        return StatusCode::from_u16(419)
            .unwrap_or(StatusCode::FORBIDDEN)
            .into_response();
    }
    let outbound = echo.publisher(&key);
    state.hub.page_post(key, &body, outbound);
    StatusCode::NO_CONTENT.into_response()
}

#[cfg(test)]
mod tests {
    use super::local_hosts;

    #[test]
    fn local_hosts_name_the_machine_with_its_port_and_without_the_default_one() {
        let on = |addr: &str| local_hosts(addr.parse().expect("an address"));
        assert_eq!(
            on("127.0.0.1:8080"),
            ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"]
        );
        assert_eq!(
            on("127.0.0.2:8080"),
            [
                "127.0.0.1:8080",
                "localhost:8080",
                "[::1]:8080",
                "127.0.0.2:8080"
            ]
        );
        assert_eq!(
            on("[::1]:80"),
            [
                "127.0.0.1:80",
                "localhost:80",
                "[::1]:80",
                "127.0.0.1",
                "localhost",
                "[::1]"
            ]
        );
    }
}
