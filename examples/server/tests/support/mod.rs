//! A real server on 127.0.0.1:0 and real WebSocket clients playing pages.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

use toolmark_demo_server::agent::{Agent, ScriptedAgent};
use toolmark_demo_server::auth::Accounts;
use toolmark_demo_server::echo::Echo;
use toolmark_demo_server::hub::{Config, Hub};
use toolmark_demo_server::server::{router, spawn, AppState};
use toolmark_demo_server::store::{ConvKey, MemoryStore};

pub struct TestServer {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
}

pub struct User {
    pub cookie: String,
    pub key: ConvKey,
}

impl TestServer {
    pub async fn start(config: Config) -> Self {
        Self::with_agent(config, Arc::new(ScriptedAgent)).await
    }

    pub async fn with_agent(config: Config, agent: Arc<dyn Agent>) -> Self {
        Self::with_echo(config, agent, None).await
    }

    pub async fn with_echo(config: Config, agent: Arc<dyn Agent>, echo: Option<Arc<Echo>>) -> Self {
        let hub = Hub::new(Arc::new(MemoryStore::new()), agent, config);
        let state = Arc::new(AppState {
            hub,
            accounts: Arc::new(Accounts::default()),
            echo,
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = spawn(listener, router(Arc::clone(&state), None))
            .await
            .expect("serve");
        Self { addr, state }
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.state.hub
    }

    /// A session and conversation for `user` (the login endpoint is tested
    /// over HTTP on its own).
    pub fn login(&self, user: &str) -> User {
        let (token, conversation) = self.state.accounts.login(user);
        User {
            cookie: format!("toolmark_session={token}"),
            key: ConvKey {
                user: user.into(),
                conversation,
            },
        }
    }

    /// Opens a WebSocket to `path`; Err carries the HTTP status of a refusal.
    pub async fn connect(
        &self,
        path: &str,
        cookie: Option<&str>,
        origin: Option<&str>,
    ) -> Result<Socket, StatusCode> {
        let mut request = format!("ws://{}{path}", self.addr)
            .into_client_request()
            .expect("request");
        if let Some(cookie) = cookie {
            request
                .headers_mut()
                .insert("Cookie", HeaderValue::from_str(cookie).expect("cookie"));
        }
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("Origin", HeaderValue::from_str(origin).expect("origin"));
        }
        match connect_async(request).await {
            Ok((socket, _)) => Ok(Socket { socket }),
            Err(WsError::Http(response)) => Err(response.status()),
            Err(error) => panic!("connect: {error}"),
        }
    }

    /// A page socket for `user`'s conversation, speaking as `client_id`.
    pub async fn page(&self, user: &User, client_id: &str) -> Page {
        let path = format!("/toolmark/ws?conversation={}", user.key.conversation);
        let socket = self
            .connect(&path, Some(&user.cookie), None)
            .await
            .expect("page socket accepted");
        Page {
            socket,
            client_id: client_id.into(),
        }
    }

    /// A page of `user` that has sent manifest `rev` with the sign-up tools, once the
    /// conversation is bound to it.
    pub async fn bound_page(&self, user: &User, client_id: &str, rev: u64) -> Page {
        let mut page = self.page(user, client_id).await;
        page.manifest(rev, signup_tools()).await;
        bound_to(self, &user.key, client_id).await;
        page
    }

    pub async fn chat(&self, user: &User) -> Socket {
        let path = format!("/chat/ws?conversation={}", user.key.conversation);
        self.connect(&path, Some(&user.cookie), None)
            .await
            .expect("chat socket accepted")
    }

    /// One HTTP/1.1 request; returns the status line, the raw head and the body.
    pub async fn http(&self, head: &str, body: &str) -> (u16, String, String) {
        let mut stream = TcpStream::connect(self.addr).await.expect("connect");
        let request = format!(
            "{head}\r\nHost: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut response = String::new();
        stream.read_to_string(&mut response).await.expect("read");
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        (status, head.to_owned(), body.to_owned())
    }

    /// Waits until the hub has rejected `count` messages in all.
    pub async fn rejections(&self, count: usize) -> Vec<toolmark_demo_server::store::Rejection> {
        for _ in 0..200 {
            let rejections = self.hub().rejections();
            if rejections.len() >= count {
                return rejections;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.hub().rejections()
    }

    /// Waits until the conversation's transcript has an entry `pred` accepts.
    pub async fn transcript_until(
        &self,
        key: &ConvKey,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        for _ in 0..300 {
            let transcript = self.hub().transcript(key);
            if pred(&transcript) {
                return transcript;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.hub().transcript(key)
    }
}

pub struct Socket {
    pub socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Socket {
    pub async fn send(&mut self, value: Value) {
        self.socket
            .send(Message::Text(value.to_string().into()))
            .await
            .expect("send");
    }

    /// The next text frame as JSON, or None after `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        loop {
            match tokio::time::timeout(wait, self.socket.next()).await {
                Ok(Some(Ok(Message::Text(text)))) => {
                    return Some(serde_json::from_str(text.as_str()).expect("JSON frame"))
                }
                Ok(Some(Ok(_))) => continue,
                _ => return None,
            }
        }
    }

    pub async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(5))
            .await
            .expect("a frame within 5 s")
    }

    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}

pub struct Page {
    pub socket: Socket,
    pub client_id: String,
}

pub fn summary(name: &str, hints: Value) -> Value {
    json!({ "name": name, "llmName": name.replace('.', "__"), "description": format!("The {name} tool"), "hints": hints })
}

/// The demo's sign-up form: fill, and a consequential submit.
pub fn signup_tools() -> Value {
    json!([
        summary("signup.fill", json!({})),
        summary("signup.submit", json!({ "consequential": true }))
    ])
}

impl Page {
    pub async fn manifest(&mut self, rev: u64, tools: Value) {
        let message = json!({ "protocol": 1, "type": "manifest", "clientId": self.client_id, "rev": rev, "tools": tools });
        self.socket.send(message).await;
    }

    pub async fn result(&mut self, id: &str, result: Value) {
        let message = json!({ "protocol": 1, "type": "result", "clientId": self.client_id, "id": id, "result": result });
        self.socket.send(message).await;
    }

    /// Answers call `id` with a needs_confirmation outcome under `confirm_id`.
    pub async fn needs_confirmation(&mut self, id: &str, confirm_id: &str) {
        let outcome =
            json!({ "status": "needs_confirmation", "confirmId": confirm_id, "summary": "Submit" });
        self.result(id, outcome).await;
    }

    pub async fn confirmed(&mut self, confirm_id: &str, result: Value) {
        let message = json!({ "protocol": 1, "type": "confirmed", "clientId": self.client_id, "confirmId": confirm_id, "result": result });
        self.socket.send(message).await;
    }

    /// The next frame addressed to this page.
    pub async fn recv(&mut self) -> Value {
        self.socket.recv().await
    }

    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        self.socket.recv_within(wait).await
    }

    pub async fn close(self) {
        self.socket.close().await;
    }
}

/// Waits until the hub has taken the page's manifest (the socket is
/// asynchronous): until the conversation is bound to `client_id`.
pub async fn bound_to(server: &TestServer, key: &ConvKey, client_id: &str) {
    for _ in 0..200 {
        if server.hub().store().active_client(key).as_deref() == Some(client_id) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("conversation never bound to {client_id}");
}

pub fn field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

pub fn quick() -> Config {
    Config {
        call_deadline: Duration::from_secs(5),
        ..Config::default()
    }
}
