//! The relay between the agent loop and the pages: page sockets, calls with
//! deadlines, inbound results and confirmations, and the conversation turns.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};

use crate::agent::Agent;
use crate::llm::{page_tools, wrap_untrusted, Message, ToolUse, PAGE_CALL, PAGE_DESCRIBE};
use crate::protocol::{
    call_message, cancel_message, describe_message, new_id, parse_inbound, status, valid_tool_name,
    Inbound, Manifest,
};
use crate::store::{
    Binding, CallBinding, CallKind, ConfirmBinding, ConvKey, Rejection, SessionStore,
};

/// How many rejections [`Hub::rejections`] remembers.
const MAX_REJECTIONS_KEPT: usize = 1000;

#[derive(Clone, Debug)]
pub struct Config {
    /// How long a call or describe may wait for its result.
    pub call_deadline: Duration,
    /// Agent steps in one turn before the server stops it.
    pub max_steps: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            call_deadline: Duration::from_secs(30),
            max_steps: 8,
        }
    }
}

/// The outcome the agent sees when the page missed a call's deadline.
pub fn timeout_outcome() -> Value {
    json!({ "status": "timeout", "message": "The page did not answer before the deadline." })
}

/// The outcome the agent sees when no page is connected to the conversation.
pub fn unavailable_outcome() -> Value {
    json!({ "status": "unavailable", "message": "No page is connected to this conversation." })
}

/// The outcome the agent sees when the page it was shown was replaced by a
/// reload between rendering its tools and the call: like the page's own
/// `stale`, it means "use the latest manifest".
fn reloaded_outcome() -> Value {
    json!({ "status": "refused", "code": "stale", "message": "The page was reloaded: use the latest manifest." })
}

/// What a page that is gone can no longer do: its confirmations expire.
fn expired_outcome() -> Value {
    json!({ "status": "refused", "code": "confirmation_expired", "message": "The confirmation expired or was already used" })
}

fn input_error(message: &str) -> Value {
    json!({ "status": "error", "message": message })
}

struct PageConn {
    conn: u64,
    tx: mpsc::UnboundedSender<String>,
}

/// One page socket's state: bound to a user and conversation when it was
/// accepted, and to the first clientId it speaks for.
pub struct PageSocket {
    conn: u64,
    key: ConvKey,
    client_id: Option<String>,
    tx: mpsc::UnboundedSender<String>,
}

struct Conversation {
    /// The conversation as the model sees it; held for a whole turn, so
    /// turns of one conversation run one after another.
    history: tokio::sync::Mutex<Vec<Message>>,
    transcript: Mutex<Vec<Value>>,
    events: broadcast::Sender<Value>,
    /// The conversation's latest manifest as the chat shows it: what the
    /// agent can do on the page.
    page_tools: watch::Sender<Value>,
}

/// A call's outcome: the page's result, or one the server made.
enum Outcome {
    Page(Value),
    Server(Value),
}

pub struct Hub {
    store: Arc<dyn SessionStore>,
    agent: Arc<dyn Agent>,
    config: Config,
    pages: Mutex<HashMap<String, PageConn>>,
    /// The conversation's sockets that have not spoken yet. A page whose
    /// socket reconnected says nothing until its next manifest or result
    /// (a reconnect does not re-send the manifest), so its clientId's
    /// frames go to these too; a page ignores another clientId's frames.
    unclaimed: Mutex<HashMap<ConvKey, Vec<PageConn>>>,
    waiters: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    conversations: Mutex<HashMap<ConvKey, Arc<Conversation>>>,
    rejections: Mutex<Vec<Rejection>>,
    next_conn: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent even if a holder panicked.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Hub {
    pub fn new(store: Arc<dyn SessionStore>, agent: Arc<dyn Agent>, config: Config) -> Arc<Self> {
        Arc::new(Self {
            store,
            agent,
            config,
            pages: Mutex::default(),
            unclaimed: Mutex::default(),
            waiters: Mutex::default(),
            conversations: Mutex::default(),
            rejections: Mutex::default(),
            next_conn: AtomicU64::new(0),
        })
    }

    pub fn store(&self) -> &dyn SessionStore {
        &*self.store
    }

    /// The inbound messages refused most recently, oldest first (for logs
    /// and tests).
    pub fn rejections(&self) -> Vec<Rejection> {
        lock(&self.rejections).clone()
    }

    fn reject(&self, rejection: Rejection) {
        eprintln!("toolmark: rejected inbound message: {rejection:?}");
        let mut rejections = lock(&self.rejections);
        if rejections.len() >= MAX_REJECTIONS_KEPT {
            rejections.remove(0);
        }
        rejections.push(rejection);
    }

    // ---- page sockets -------------------------------------------------

    /// A page socket accepted for `key`; frames for the page arrive on the
    /// receiver.
    pub fn page_opened(&self, key: ConvKey) -> (PageSocket, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        lock(&self.unclaimed)
            .entry(key.clone())
            .or_default()
            .push(PageConn {
                conn,
                tx: tx.clone(),
            });
        let socket = PageSocket {
            conn,
            key,
            client_id: None,
            tx,
        };
        (socket, rx)
    }

    /// One message a page posted (the Echo mode), checked like a socket's
    /// first frame; frames for that page go to `outbound`.
    pub fn page_post(
        self: &Arc<Self>,
        key: ConvKey,
        text: &str,
        outbound: mpsc::UnboundedSender<String>,
    ) {
        let mut post = PageSocket {
            conn: self.next_conn.fetch_add(1, Ordering::Relaxed),
            key,
            client_id: None,
            tx: outbound,
        };
        self.page_frame(&mut post, text);
    }

    /// One text frame from a page socket.
    pub fn page_frame(self: &Arc<Self>, socket: &mut PageSocket, text: &str) {
        let message = match parse_inbound(text) {
            Ok(message) => message,
            Err(reason) => return self.reject(Rejection::InvalidMessage(reason)),
        };
        let client_id = message.client_id();
        match &socket.client_id {
            Some(own) if own != client_id => return self.reject(Rejection::ForeignClient),
            Some(_) => {}
            None => {
                if let Err(rejection) = self.store.claim_client(&socket.key, client_id) {
                    return self.reject(rejection);
                }
                socket.client_id = Some(client_id.to_owned());
                self.forget_unclaimed(&socket.key, socket.conn);
                lock(&self.pages).insert(
                    client_id.to_owned(),
                    PageConn {
                        conn: socket.conn,
                        tx: socket.tx.clone(),
                    },
                );
            }
        }
        let binding = Binding {
            key: socket.key.clone(),
            client_id: client_id.to_owned(),
        };
        match message {
            Inbound::Manifest { manifest, .. } => {
                let names: Vec<&str> = manifest
                    .tools
                    .iter()
                    .map(|tool| tool.name.as_str())
                    .collect();
                let shown = json!({ "clientId": binding.client_id, "tools": names });
                match self.store.put_manifest(&binding, manifest) {
                    Ok(previous) => {
                        self.conversation(&binding.key)
                            .page_tools
                            .send_replace(shown);
                        if let Some(previous) = previous.filter(|previous| !self.is_live(previous))
                        {
                            self.page_gone(&binding.key, &previous);
                        }
                    }
                    Err(rejection) => self.reject(rejection),
                }
            }
            // The tool list stays the last manifest's until a new one comes.
            Inbound::Changed { .. } => {}
            Inbound::Result { id, result, .. } => self.accept_result(&binding, &id, result),
            Inbound::Confirmed {
                confirm_id, result, ..
            } => self.accept_confirmed(&binding, &confirm_id, result),
        }
    }

    /// The page socket closed. A page that is no longer the conversation's
    /// (a reload replaced it) is gone.
    pub fn page_closed(self: &Arc<Self>, socket: PageSocket) {
        self.forget_unclaimed(&socket.key, socket.conn);
        let Some(client_id) = socket.client_id else {
            return;
        };
        {
            let mut pages = lock(&self.pages);
            if pages
                .get(&client_id)
                .is_some_and(|page| page.conn == socket.conn)
            {
                pages.remove(&client_id);
            }
        }
        if !self.is_live(&client_id)
            && self.store.active_client(&socket.key).as_deref() != Some(client_id.as_str())
        {
            self.page_gone(&socket.key, &client_id);
        }
    }

    /// Whether a socket speaks for `client_id`.
    pub fn is_live(&self, client_id: &str) -> bool {
        lock(&self.pages).contains_key(client_id)
    }

    fn forget_unclaimed(&self, key: &ConvKey, conn: u64) {
        let mut unclaimed = lock(&self.unclaimed);
        if let Some(sockets) = unclaimed.get_mut(key) {
            sockets.retain(|socket| socket.conn != conn);
            if sockets.is_empty() {
                unclaimed.remove(key);
            }
        }
    }

    /// Sends a frame to the page `to`: on the socket that speaks for its
    /// clientId, or else on every socket of its conversation that has not
    /// spoken yet (where a reconnected page waits).
    fn send_to(&self, to: &Binding, frame: String) -> bool {
        if let Some(page) = lock(&self.pages).get(&to.client_id) {
            return page.tx.send(frame).is_ok();
        }
        let unclaimed = lock(&self.unclaimed);
        let sockets = unclaimed.get(&to.key).map_or(&[][..], Vec::as_slice);
        let mut sent = false;
        for socket in sockets {
            sent |= socket.tx.send(frame.clone()).is_ok();
        }
        sent
    }

    fn page_gone(self: &Arc<Self>, key: &ConvKey, client_id: &str) {
        for confirm in self.store.expire_page(client_id) {
            self.spawn_confirmation_turn(key.clone(), confirm, Outcome::Server(expired_outcome()));
        }
    }

    fn accept_result(&self, from: &Binding, id: &str, result: Value) {
        let call = match self.store.settle_call(id, from, Instant::now()) {
            Ok(call) => call,
            Err(rejection) => {
                if rejection == Rejection::LateResult {
                    // Settling found the deadline passed and timed the call
                    // out, so the waiting call's own expiry finds it settled
                    // and waits for an answer: dropping its sender gives it
                    // the timeout instead.
                    lock(&self.waiters).remove(id);
                }
                return self.reject(rejection);
            }
        };
        if let (CallKind::Call { tool, .. }, "needs_confirmation") = (&call.kind, status(&result)) {
            let confirm_id = result
                .get("confirmId")
                .and_then(Value::as_str)
                .unwrap_or("");
            let bound = self.store.bind_confirm(ConfirmBinding {
                confirm_id: confirm_id.to_owned(),
                binding: from.clone(),
                call_id: call.id.clone(),
                tool: tool.clone(),
                tool_use_id: call.tool_use_id.clone(),
            });
            if let Err(rejection) = bound {
                self.reject(rejection);
            }
        }
        if let Some(waiter) = lock(&self.waiters).remove(id) {
            let _ = waiter.send(result);
        }
    }

    fn accept_confirmed(self: &Arc<Self>, from: &Binding, confirm_id: &str, result: Value) {
        match self.store.settle_confirm(confirm_id, from) {
            Ok(confirm) => {
                self.spawn_confirmation_turn(from.key.clone(), confirm, Outcome::Page(result));
            }
            Err(rejection) => self.reject(rejection),
        }
    }

    // ---- calls ----------------------------------------------------------

    /// Sends one call or describe to `to` and waits for its result until the
    /// deadline. The binding is stored before the frame is sent.
    async fn request(
        &self,
        to: &Binding,
        kind: CallKind,
        input: &Value,
        tool_use_id: &str,
    ) -> Outcome {
        let id = new_id();
        let deadline = Instant::now() + self.config.call_deadline;
        let frame = match &kind {
            CallKind::Call { tool, rev, .. } => call_message(&to.client_id, &id, *rev, tool, input),
            CallKind::Describe { tool } => describe_message(&to.client_id, &id, tool),
        };
        let (tx, mut rx) = oneshot::channel();
        lock(&self.waiters).insert(id.clone(), tx);
        let bound = self.store.bind_call(CallBinding {
            id: id.clone(),
            binding: to.clone(),
            kind,
            deadline,
            tool_use_id: tool_use_id.to_owned(),
        });
        if bound.is_err() {
            lock(&self.waiters).remove(&id);
            return Outcome::Server(input_error("Could not bind the call."));
        }
        if !self.send_to(to, frame) {
            self.store.expire_call(&id);
            lock(&self.waiters).remove(&id);
            return Outcome::Server(unavailable_outcome());
        }
        match timeout_at(deadline, &mut rx).await {
            Ok(Ok(result)) => Outcome::Page(result),
            Ok(Err(_)) => Outcome::Server(timeout_outcome()),
            Err(_) => {
                if self.store.expire_call(&id) {
                    lock(&self.waiters).remove(&id);
                    // Rule 3: the page stops work on a call the agent gave up.
                    self.send_to(to, cancel_message(&to.client_id, &id));
                    Outcome::Server(timeout_outcome())
                } else {
                    // The result was accepted just before the deadline.
                    match rx.await {
                        Ok(result) => Outcome::Page(result),
                        Err(_) => Outcome::Server(timeout_outcome()),
                    }
                }
            }
        }
    }

    /// The page the conversation is bound to and its latest manifest.
    fn page_view(&self, key: &ConvKey) -> Option<(String, Option<Manifest>)> {
        let client_id = self.store.active_client(key)?;
        let manifest = self.store.manifest(&client_id);
        Some((client_id, manifest))
    }

    /// Runs one LLM tool call against the page the tools were rendered
    /// from. Returns the content for the model and the raw outcome.
    async fn execute(
        &self,
        key: &ConvKey,
        page: Option<&(String, Option<Manifest>)>,
        used: &ToolUse,
    ) -> (Value, Value) {
        let tool = used.input.get("tool").and_then(Value::as_str);
        let call_input = used.input.get("input");
        let valid = match used.name.as_str() {
            PAGE_CALL => {
                tool.is_some_and(valid_tool_name) && call_input.is_some_and(Value::is_object)
            }
            PAGE_DESCRIBE => tool.is_some_and(valid_tool_name),
            _ => false,
        };
        if !valid {
            let error = match used.name.as_str() {
                PAGE_CALL => input_error("page_call takes a tool name and an input object."),
                PAGE_DESCRIBE => input_error("page_describe takes a tool name."),
                _ => input_error("Unknown tool: only page_call and page_describe exist."),
            };
            return (error.clone(), error);
        }
        let tool = tool.unwrap_or_default();
        let Some((client_id, manifest)) = page else {
            return (unavailable_outcome(), unavailable_outcome());
        };
        if self.store.active_client(key).as_deref() != Some(client_id.as_str()) {
            return (reloaded_outcome(), reloaded_outcome());
        }
        let to = Binding {
            key: key.clone(),
            client_id: client_id.clone(),
        };
        let untrusted = manifest
            .as_ref()
            .and_then(|manifest| manifest.tool(tool))
            .is_some_and(|entry| entry.untrusted_content);
        let kind = if used.name == PAGE_CALL {
            CallKind::Call {
                tool: tool.to_owned(),
                rev: manifest.as_ref().map(|manifest| manifest.rev),
                untrusted,
            }
        } else {
            CallKind::Describe {
                tool: tool.to_owned(),
            }
        };
        let empty = json!({});
        let outcome = self
            .request(&to, kind, call_input.unwrap_or(&empty), &used.id)
            .await;
        // Marked in the manifest the model saw or in the page's latest,
        // which may have come while the call ran: wrapped either way.
        let untrusted = untrusted
            || self
                .store
                .manifest(client_id)
                .and_then(|latest| latest.tool(tool).map(|entry| entry.untrusted_content))
                .unwrap_or(false);
        match outcome {
            Outcome::Page(result) if untrusted && used.name == PAGE_CALL => {
                (wrap_untrusted(&result), result)
            }
            Outcome::Page(result) | Outcome::Server(result) => (result.clone(), result),
        }
    }

    /// `page_call` as the model would make it, outside any turn: what the
    /// model would be handed.
    pub async fn page_call(&self, key: &ConvKey, tool: &str, input: Value) -> Value {
        let used = ToolUse {
            id: new_id(),
            name: PAGE_CALL.to_owned(),
            input: json!({ "tool": tool, "input": input }),
        };
        let page = self.page_view(key);
        self.execute(key, page.as_ref(), &used).await.0
    }

    /// `page_describe` as the model would make it, outside any turn.
    pub async fn page_describe(&self, key: &ConvKey, tool: &str) -> Value {
        let used = ToolUse {
            id: new_id(),
            name: PAGE_DESCRIBE.to_owned(),
            input: json!({ "tool": tool }),
        };
        let page = self.page_view(key);
        self.execute(key, page.as_ref(), &used).await.0
    }

    // ---- conversations ------------------------------------------------

    fn conversation(&self, key: &ConvKey) -> Arc<Conversation> {
        lock(&self.conversations)
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Conversation {
                    history: tokio::sync::Mutex::default(),
                    transcript: Mutex::default(),
                    events: broadcast::channel(256).0,
                    page_tools: watch::channel(json!({ "clientId": null, "tools": [] })).0,
                })
            })
            .clone()
    }

    fn emit(conversation: &Conversation, entry: Value) {
        let mut transcript = lock(&conversation.transcript);
        transcript.push(entry.clone());
        let _ = conversation.events.send(entry);
    }

    /// The chat transcript so far and the entries that follow.
    pub fn subscribe(&self, key: &ConvKey) -> (Vec<Value>, broadcast::Receiver<Value>) {
        let conversation = self.conversation(key);
        let transcript = lock(&conversation.transcript);
        (transcript.clone(), conversation.events.subscribe())
    }

    /// The clientId and tool names of the conversation's latest manifest,
    /// now and on every change.
    pub fn watch_page_tools(&self, key: &ConvKey) -> watch::Receiver<Value> {
        self.conversation(key).page_tools.subscribe()
    }

    pub fn transcript(&self, key: &ConvKey) -> Vec<Value> {
        lock(&self.conversation(key).transcript).clone()
    }

    /// The conversation as the model sees it (for tests and logs).
    pub async fn history(&self, key: &ConvKey) -> Vec<Message> {
        self.conversation(key).history.lock().await.clone()
    }

    /// The user's chat line starts a turn with the page tools.
    pub fn say(self: &Arc<Self>, key: &ConvKey, line: String) -> JoinHandle<()> {
        let hub = Arc::clone(self);
        let key = key.clone();
        tokio::spawn(async move {
            let conversation = hub.conversation(&key);
            let mut history = conversation.history.lock().await;
            Self::emit(&conversation, json!({ "kind": "user", "text": line }));
            history.push(Message::User { text: line });
            hub.run_turn(&key, &conversation, &mut history, true).await;
        })
    }

    /// Appends a confirmation's outcome as the result of the tool call that
    /// asked for it, then runs exactly one acknowledgement step without page
    /// tools.
    fn spawn_confirmation_turn(
        self: &Arc<Self>,
        key: ConvKey,
        confirm: ConfirmBinding,
        outcome: Outcome,
    ) {
        let hub = Arc::clone(self);
        tokio::spawn(async move {
            let conversation = hub.conversation(&key);
            let mut history = conversation.history.lock().await;
            let (content, raw) = match outcome {
                // Page data, never instructions.
                Outcome::Page(result) => (wrap_untrusted(&result), result),
                Outcome::Server(result) => (result.clone(), result),
            };
            Self::emit(
                &conversation,
                json!({ "kind": "confirmation", "confirmId": confirm.confirm_id, "tool": confirm.tool, "outcome": raw }),
            );
            history.push(Message::ToolResult {
                tool_use_id: confirm.tool_use_id,
                confirm_id: Some(confirm.confirm_id),
                content: content.to_string(),
            });
            hub.run_turn(&key, &conversation, &mut history, false).await;
        });
    }

    async fn run_turn(
        &self,
        key: &ConvKey,
        conversation: &Conversation,
        history: &mut Vec<Message>,
        with_page_tools: bool,
    ) {
        for _ in 0..self.config.max_steps {
            let page = if with_page_tools {
                self.page_view(key)
            } else {
                None
            };
            let tools = if with_page_tools {
                page_tools(page.as_ref().and_then(|(_, manifest)| manifest.as_ref()))
            } else {
                Vec::new()
            };
            let reply = self.agent.next(history, &tools).await;
            // An acknowledgement turn has no tools: any tool call is dropped.
            let tool_uses = if with_page_tools {
                reply.tool_uses
            } else {
                Vec::new()
            };
            if reply.text.is_none() && tool_uses.is_empty() {
                return;
            }
            if let Some(text) = &reply.text {
                Self::emit(conversation, json!({ "kind": "agent", "text": text }));
            }
            history.push(Message::Assistant {
                text: reply.text,
                tool_uses: tool_uses.clone(),
            });
            if tool_uses.is_empty() {
                return;
            }
            for used in &tool_uses {
                let (content, raw) = self.execute(key, page.as_ref(), used).await;
                Self::emit(
                    conversation,
                    json!({ "kind": "tool", "name": used.name, "input": used.input, "outcome": raw }),
                );
                history.push(Message::ToolResult {
                    tool_use_id: used.id.clone(),
                    confirm_id: None,
                    content: content.to_string(),
                });
            }
        }
        Self::emit(
            conversation,
            json!({ "kind": "agent", "text": "I stopped: that took too many steps." }),
        );
    }
}
