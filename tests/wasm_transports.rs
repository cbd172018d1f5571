//! The transports inside WebAssembly, in real headless Chromium, against
//! their real counterparts: a `ws` agent, frames on two more origins, soketi
//! with laravel-echo and pusher-js and a Laravel-like backend; and each
//! driver against fakes of what it drives (a socket, a window, an Echo
//! channel) that count the listeners, for what a real host does not show:
//! close and unsubscribe detach every listener, and a subscriber may send
//! or close from inside its callback. `node js/build/wasm-test.mjs` starts the counterparts
//! (tests/node/support/wasm-counterparts.mjs) and hands this test its control
//! server's URL at compile time.
#![cfg(target_arch = "wasm32")]

use serde_json::{json, Value};
use toolmark_bridge::wasm;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const CONTROL: Option<&str> = option_env!("TOOLMARK_TEST_CONTROL_URL");

#[wasm_bindgen(inline_js = "
export async function control(base, path, body) {
  const response = await fetch(base + path, { method: path === '/config' ? 'GET' : 'POST', body: path === '/config' ? undefined : body });
  const text = await response.text();
  if (!response.ok) throw new Error(`control ${path}: ${response.status} ${text}`);
  return text;
}
export function to_json(value) { return JSON.stringify(value); }
export function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }
// Tools whose runs, signals and error events the test reads: `greet` answers at
// once; `slow` answers when released, or rejects when its signal aborts.
export function page_kit() {
  const state = { runs: [], errors: [], release: undefined, aborted: false };
  const greet = {
    name: 'greet', description: 'Greets someone', hints: { readOnly: true },
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    run: ({ name }) => { state.runs.push(name); return { text: `hello ${name}` }; },
  };
  const slow = {
    name: 'slow', description: 'Answers when released', hints: { readOnly: true },
    run: (_input, { signal }) => new Promise((resolve, reject) => {
      state.runs.push('slow');
      state.release = () => resolve({ text: 'done' });
      signal.addEventListener('abort', () => { state.aborted = true; reject(signal.reason); });
    }),
  };
  const later = { name: 'later', description: 'Registered later', run: () => 1 };
  return { state, greet, slow, later, onError: (e) => state.errors.push(e.code) };
}
export function release(kit) { kit.state.release(); }
export function runs(kit) { return JSON.stringify(kit.state.runs); }
export function errors(kit) { return JSON.stringify(kit.state.errors); }
export function with_transport(transport) { return { transport }; }
export function ws_options(url) { return { url, maxDelayMs: 300 }; }
export function call_method(target, name) { return target[name](); }
export function add_frame(src) {
  return new Promise((resolve, reject) => {
    const frame = document.createElement('iframe');
    frame.src = src;
    frame.onload = () => resolve(frame.contentWindow);
    frame.onerror = reject;
    document.body.append(frame);
  });
}
export function post_to(target, message_json, origin) { target.postMessage(JSON.parse(message_json), origin); }
export function page_origin() { return location.origin; }
// Ids of every message event the page's window gets, whoever listens.
export function watch_messages() {
  const seen = [];
  addEventListener('message', (e) => seen.push(e.data?.message?.id ?? e.data?.id));
  return seen;
}
export function has_seen(seen, id) { return seen.includes(id); }
export function pm_options(target, origin) { return { target, targetOrigin: origin, allowedOrigins: [origin] }; }
export async function new_echo(bundle_url, config_json) {
  const { Echo, Pusher } = await import(bundle_url);
  const { key, wsHost, wsPort } = JSON.parse(config_json);
  return new Echo({
    broadcaster: 'pusher', Pusher, key, cluster: 'mt1', wsHost, wsPort,
    forceTLS: false, enabledTransports: ['ws'], disableStats: true,
  });
}
export function echo_options(echo, channel, postUrl) {
  // Counts echo.private(): a refused postUrl must not join the channel.
  const joined = { count: 0 };
  const counted = new Proxy(echo, {
    get(target, key) {
      if (key !== 'private') return Reflect.get(target, key);
      return (...args) => { joined.count++; return target.private(...args); };
    },
  });
  return { echo: counted, channel, ...(postUrl === undefined ? {} : { postUrl }), joined };
}
export function joined(options) { return options.joined.count; }
export function error_text(error) { return `${error?.constructor?.name}: ${error?.message}`; }
")]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn control(base: &str, path: &str, body: &str) -> Result<JsValue, JsValue>;
    fn to_json(value: &JsValue) -> String;
    fn sleep(ms: u32) -> js_sys::Promise;
    fn page_kit() -> JsValue;
    fn release(kit: &JsValue);
    fn runs(kit: &JsValue) -> String;
    fn errors(kit: &JsValue) -> String;
    fn with_transport(transport: JsValue) -> JsValue;
    fn ws_options(url: &str) -> JsValue;
    fn call_method(target: &JsValue, name: &str) -> JsValue;
    fn add_frame(src: &str) -> js_sys::Promise;
    fn post_to(target: &JsValue, message_json: &str, origin: &str);
    fn page_origin() -> String;
    fn watch_messages() -> JsValue;
    fn has_seen(seen: &JsValue, id: &str) -> bool;
    fn pm_options(target: &JsValue, origin: &str) -> JsValue;
    #[wasm_bindgen(catch)]
    async fn new_echo(bundle_url: &str, config_json: &str) -> Result<JsValue, JsValue>;
    fn echo_options(echo: &JsValue, channel: &str, post_url: Option<String>) -> JsValue;
    fn joined(options: &JsValue) -> u32;
    fn error_text(error: &JsValue) -> String;
}

fn field(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A POST to the counterparts' control server (GET for `/config`), as JSON.
async fn ask(path: &str, body: Value) -> Value {
    let Some(base) = CONTROL else {
        panic!("TOOLMARK_TEST_CONTROL_URL is unset: run these tests with `node js/build/wasm-test.mjs`")
    };
    match control(base, path, &body.to_string()).await {
        Ok(text) => {
            serde_json::from_str(&text.as_string().unwrap_or_default()).unwrap_or(Value::Null)
        }
        Err(error) => panic!("{}", error_text(&error)),
    }
}

async fn pause(ms: u32) {
    let _ = JsFuture::from(sleep(ms)).await;
}

/// Polls `check` every 10 ms for up to 5 s.
async fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let end = js_sys::Date::now() + 5000.0;
    while !check() {
        assert!(js_sys::Date::now() < end, "timed out waiting for {what}");
        pause(10).await;
    }
}

/// A registry with the kit's `greet` and `slow`, and its error events in the kit.
fn registry(kit: &JsValue) -> wasm::Toolmark {
    let tm = wasm::create_toolmark(JsValue::UNDEFINED).unwrap_or_else(|_| panic!("registry"));
    assert!(tm.register(field(kit, "greet")).is_ok());
    assert!(tm.register(field(kit, "slow")).is_ok());
    assert!(tm
        .events()
        .on("error".into(), field(kit, "onError"))
        .is_ok());
    tm
}

/// `tm.use(bridge({ transport }))`; returns the detach function.
fn attach(tm: &wasm::Toolmark, transport: JsValue) -> js_sys::Function {
    let plugin =
        wasm::bridge(with_transport(transport)).unwrap_or_else(|e| panic!("{}", error_text(&e)));
    tm.use_plugin(plugin.into())
        .unwrap_or_else(|e| panic!("{}", error_text(&e)))
}

/// websocketTransport against the `ws` agent: a call answered over the
/// socket; binary, oversized and non-JSON frames dropped unanswered; the server killed
/// and restarted on its port mid-call, the buffered result arriving once.
#[wasm_bindgen_test]
async fn websocket_transport_against_a_ws_agent() {
    let config = ask("/config", Value::Null).await;
    let kit = page_kit();
    let tm = registry(&kit);
    let url = config["ws"].as_str().unwrap_or_default();
    let transport =
        wasm::websocket_transport(ws_options(url)).unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let transport = JsValue::from(transport);
    let detach = attach(&tm, transport.clone());

    let answer = ask(
        "/ws/call",
        json!({ "tool": "greet", "input": { "name": "ada" } }),
    )
    .await;
    assert_eq!(answer["result"]["id"], answer["id"]);
    assert_eq!(
        answer["result"]["result"],
        json!({ "status": "ok", "data": { "text": "hello ada" } })
    );

    ask("/ws/junk", Value::Null).await;
    let answer = ask(
        "/ws/call",
        json!({ "tool": "greet", "input": { "name": "grace" } }),
    )
    .await;
    assert_eq!(
        answer["result"]["result"]["data"],
        json!({ "text": "hello grace" })
    );
    // The binary and oversized calls were not run, and nothing answered the dropped frames:
    // the page sent its manifest and two results.
    assert_eq!(answer["results"], 2);
    assert_eq!(answer["frames"], 3);
    assert_eq!(runs(&kit), r#"["ada","grace"]"#);

    let started = ask(
        "/ws/call",
        json!({ "tool": "slow", "input": {}, "wait": false }),
    )
    .await;
    wait_for("the slow run", || runs(&kit).contains("slow")).await;
    ask("/ws/kill", Value::Null).await;
    pause(200).await;
    release(&kit); // the result is buffered while disconnected
    pause(400).await; // at least one refused reconnect
    ask("/ws/start", Value::Null).await;
    let answer = ask(
        "/ws/results",
        json!({ "id": started["id"], "settleMs": 700 }),
    )
    .await;
    assert_eq!(
        answer["results"],
        json!([{ "generation": 1, "message": {
            "protocol": 1, "type": "result", "clientId": answer["results"][0]["message"]["clientId"],
            "id": started["id"], "result": { "status": "ok", "data": { "text": "done" } }
        } }])
    );
    // The conversation goes on over the new socket.
    let answer = ask(
        "/ws/call",
        json!({ "tool": "greet", "input": { "name": "after" } }),
    )
    .await;
    assert_eq!(
        answer["result"]["result"]["data"],
        json!({ "text": "hello after" })
    );
    // While the server was down (600 ms and more; the delay is capped at
    // 300 ms), at least one reconnect attempt failed, each raising
    // `transport_failed`: the only error events are those.
    let codes: Vec<String> = serde_json::from_str(&errors(&kit)).unwrap_or_default();
    assert!(
        !codes.is_empty(),
        "no transport_failed for the refused reconnects"
    );
    assert!(
        codes.iter().all(|code| code == "transport_failed"),
        "{codes:?}"
    );
    let _ = detach.call0(&JsValue::NULL);
    call_method(&transport, "close");
}

/// postMessageTransport between the page (the runner's origin) and an agent
/// frame on http://localhost:PORT; a frame on a third origin that knows the
/// clientId posts calls: no run, no answer.
#[wasm_bindgen_test]
async fn post_message_transport_across_origins() {
    let config = ask("/config", Value::Null).await;
    let origin = page_origin();
    let agent_page = config["agentPage"].as_str().unwrap_or_default();
    let attacker_page = config["attackerPage"].as_str().unwrap_or_default();
    let agent_origin = agent_page.trim_end_matches("/agent.html");
    let attacker_origin = attacker_page.trim_end_matches("/attacker.html");
    let query = js_sys::encode_uri_component(&origin);
    let agent = JsFuture::from(add_frame(&format!("{agent_page}?parent={query}")))
        .await
        .unwrap_or_else(|e| panic!("agent frame: {}", error_text(&e)));
    let attacker = JsFuture::from(add_frame(attacker_page))
        .await
        .unwrap_or_else(|e| panic!("attacker frame: {}", error_text(&e)));
    ask("/pm/wait", json!({ "kind": "agent-ready" })).await;
    ask("/pm/wait", json!({ "kind": "attacker-ready" })).await;

    let seen = watch_messages();
    let kit = page_kit();
    let tm = registry(&kit);
    let transport = wasm::post_message_transport(pm_options(&agent, agent_origin))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let transport = JsValue::from(transport);
    let detach = attach(&tm, transport.clone());
    let manifest = ask("/pm/wait", json!({ "kind": "manifest" })).await;
    assert_eq!(manifest["tools"], json!(["greet", "slow"]));
    let client_id = manifest["clientId"].as_str().unwrap_or_default();

    post_to(&agent, r#"{"command":"call","name":"ada"}"#, agent_origin);
    let first = ask("/pm/wait", json!({ "kind": "result" })).await;
    assert_eq!(first["message"]["clientId"], client_id);
    assert_eq!(
        first["message"]["result"],
        json!({ "status": "ok", "data": { "text": "hello ada" } })
    );

    let ids = ["attack-star", "attack-exact", "attack-bare"];
    let attack =
        json!({ "command": "attack", "clientId": client_id, "ids": ids, "pageOrigin": origin });
    post_to(&attacker, &attack.to_string(), attacker_origin);
    wait_for("the attacker's calls", || {
        ids.iter().all(|id| has_seen(&seen, id))
    })
    .await;
    // A good call last: the page handles messages in order, so the attacker's came before it.
    post_to(&agent, r#"{"command":"call","name":"last"}"#, agent_origin);
    wait_for("the agent's second call", || runs(&kit).contains("last")).await;
    pause(100).await;
    assert_eq!(runs(&kit), r#"["ada","last"]"#);
    post_to(&attacker, r#"{"command":"report"}"#, attacker_origin);
    let report = ask("/pm/wait", json!({ "kind": "attacker-received" })).await;
    assert_eq!(
        report["received"],
        json!([]),
        "nothing reached the attacker"
    );
    assert_eq!(errors(&kit), "[]", "nothing foreign reached the bridge");
    let _ = detach.call0(&JsValue::NULL);
    call_method(&transport, "close");
}

/// echoTransport with the real laravel-echo and pusher-js against soketi and
/// the backend: a cross-origin postUrl refused before the channel is joined;
/// a call round trip; a 500 from the POST raising `transport_failed`.
#[wasm_bindgen_test]
async fn echo_transport_against_soketi() {
    let config = ask("/config", Value::Null).await;
    let bundle = config["echoBundle"].as_str().unwrap_or_default();
    let echo = new_echo(bundle, &config["echo"].to_string())
        .await
        .unwrap_or_else(|e| panic!("laravel-echo: {}", error_text(&e)));
    let channel = config["echo"]["channel"].as_str().unwrap_or_default();

    let cross_origin = config["crossOriginPostUrl"].as_str().map(str::to_owned);
    let options = echo_options(&echo, channel, cross_origin);
    let refused = wasm::echo_transport(options.clone())
        .err()
        .map(|e| error_text(&e));
    assert!(
        refused
            .as_deref()
            .is_some_and(|e| e.starts_with("ToolmarkError: echoTransport: postUrl")),
        "{refused:?}"
    );
    assert_eq!(joined(&options), 0);

    let kit = page_kit();
    let tm = registry(&kit);
    // The default postUrl, /toolmark/bridge on the page's own origin.
    let options = echo_options(&echo, channel, None);
    let transport =
        wasm::echo_transport(options.clone()).unwrap_or_else(|e| panic!("{}", error_text(&e)));
    assert_eq!(joined(&options), 1);
    let transport = JsValue::from(transport);
    let detach = attach(&tm, transport.clone());
    let answer = ask("/echo/call", json!({ "name": "ada" })).await;
    assert_eq!(answer["result"]["id"], answer["id"]);
    assert_eq!(
        answer["result"]["result"],
        json!({ "status": "ok", "data": { "text": "hello ada" } })
    );
    assert_eq!(answer["sameOriginRequest"], "same-origin");

    ask("/echo/status", json!({ "status": 500 })).await;
    assert!(tm.register(field(&kit, "later")).is_ok()); // a new manifest, POSTed
    wait_for("transport_failed", || {
        errors(&kit).contains("transport_failed")
    })
    .await;
    ask("/echo/status", json!({ "status": 200 })).await;
    let state = ask("/echo/state", Value::Null).await;
    assert_eq!(
        state["auths"],
        json!([[format!("private-{channel}"), true]])
    );
    assert_eq!(
        state["posts"].as_array().and_then(|p| p.last()),
        Some(&json!(["manifest", 500]))
    );
    assert_eq!(errors(&kit), r#"["transport_failed"]"#);
    let _ = detach.call0(&JsValue::NULL);
    call_method(&echo, "disconnect");
}

#[wasm_bindgen(inline_js = "
// An event target that counts its listeners and calls them on `emit`.
class FakeTarget {
  listeners = new Map();
  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
  }
  removeEventListener(type, listener) { this.listeners.get(type)?.delete(listener); }
  emit(type, event) { for (const listener of [...(this.listeners.get(type) ?? [])]) listener(event); }
}
class FakeSocket extends FakeTarget {
  static all = [];
  sent = [];
  closedWith = undefined;
  constructor(url) { super(); this.url = url; FakeSocket.all.push(this); }
  send(text) { this.sent.push(text); }
  close(code) { this.closedWith = code ?? 'none'; }
}
export function fake_socket_options(max_delay_ms) {
  FakeSocket.all = [];
  return { url: 'ws://fake.test/', maxDelayMs: max_delay_ms, WebSocket: FakeSocket };
}
export function sockets() { return FakeSocket.all.length; }
export function socket_at(i) { return FakeSocket.all[i]; }
export function listeners_of(target) {
  let count = 0;
  for (const set of target.listeners.values()) count += set.size;
  return count;
}
export function emit(target, type, event_json) { target.emit(type, event_json === undefined ? {} : JSON.parse(event_json)); }
export function sent_json(socket) { return JSON.stringify(socket.sent); }
export function closed_with(socket) { return socket.closedWith; }
export function fake_window() {
  const window = new FakeTarget();
  window.posted = [];
  window.postMessage = (data, origin) => window.posted.push([data, origin]);
  return window;
}
export function pm_fake_options(target, source) {
  return { target, source, targetOrigin: 'https://agent.test', allowedOrigins: ['https://agent.test'] };
}
export function post_from(source, target, message_json) {
  source.emit('message', { data: { toolmark: 1, message: JSON.parse(message_json) }, origin: 'https://agent.test', source: target });
}
export function posted_json(window) { return JSON.stringify(window.posted); }
export function fake_echo() {
  const channel = new FakeTarget();
  const echo = { channel, left: [], posts: [] };
  echo.private = () => channel;
  echo.leaveChannel = (name) => echo.left.push(name);
  channel.listen = (event, listener) => { channel.addEventListener(event, listener); return channel; };
  channel.stopListening = (event, listener) => { channel.removeEventListener(event, listener); return channel; };
  return echo;
}
export function echo_fake_options(echo) {
  return {
    echo, channel: 'toolmark.7.42',
    fetch: (url, init) => { echo.posts.push(JSON.parse(init.body)); return Promise.resolve({ status: 200 }); },
  };
}
export function broadcast(echo, payload_json) { echo.channel.emit('.toolmark.message', JSON.parse(payload_json)); }
export function echo_listeners(echo) { return listeners_of(echo.channel); }
export function echo_json(echo, key) { return JSON.stringify(echo[key]); }
// A subscriber that records what it gets and, from inside its callback,
// sends `{ reply }` for a message with `reply` and closes the transport for
// one with `close`.
export function reentrant_subscriber(transport) {
  const seen = [];
  transport.onMessage((message) => {
    seen.push(message);
    if (message.reply !== undefined) transport.send({ reply: message.reply });
    if (message.close) transport.close();
  });
  return seen;
}
export function recording_subscriber(transport) {
  const seen = [];
  seen.off = transport.onMessage((message) => seen.push(message));
  return seen;
}
export function unsubscribe(seen) { seen.off(); }
// A subscriber that throws, and the host's reports of it (reportError).
export function throwing_subscriber(transport) { transport.onMessage(() => { throw new Error('subscriber bug'); }); }
export function capture_reports() {
  const reports = [];
  const original = globalThis.reportError;
  globalThis.reportError = (error) => reports.push(String(error?.message));
  reports.restore = () => { globalThis.reportError = original; };
  return reports;
}
export function restore_reports(reports) { reports.restore(); }
export function call_with(target, name, json) { return target[name](JSON.parse(json)); }
")]
extern "C" {
    fn fake_socket_options(max_delay_ms: u32) -> JsValue;
    fn sockets() -> u32;
    fn socket_at(i: u32) -> JsValue;
    fn listeners_of(target: &JsValue) -> u32;
    fn emit(target: &JsValue, kind: &str, event_json: Option<String>);
    fn sent_json(socket: &JsValue) -> String;
    fn closed_with(socket: &JsValue) -> JsValue;
    fn fake_window() -> JsValue;
    fn pm_fake_options(target: &JsValue, source: &JsValue) -> JsValue;
    fn post_from(source: &JsValue, target: &JsValue, message_json: &str);
    fn posted_json(window: &JsValue) -> String;
    fn fake_echo() -> JsValue;
    fn echo_fake_options(echo: &JsValue) -> JsValue;
    fn broadcast(echo: &JsValue, payload_json: &str);
    fn echo_listeners(echo: &JsValue) -> u32;
    fn echo_json(echo: &JsValue, key: &str) -> String;
    fn reentrant_subscriber(transport: &JsValue) -> JsValue;
    fn recording_subscriber(transport: &JsValue) -> JsValue;
    fn unsubscribe(seen: &JsValue);
    fn throwing_subscriber(transport: &JsValue);
    fn capture_reports() -> JsValue;
    fn restore_reports(reports: &JsValue);
    #[wasm_bindgen(catch)]
    fn call_with(target: &JsValue, name: &str, json: &str) -> Result<JsValue, JsValue>;
}

fn sent(transport: &JsValue, json: &str) {
    if let Err(error) = call_with(transport, "send", json) {
        panic!("send {json}: {}", error_text(&error));
    }
}

/// websocketTransport's driver: four listeners per socket, detached at its
/// `close` event; a send while not ready buffered and flushed on open, over
/// the socket the reconnect made; a subscriber's throw reported, not thrown
/// into the socket's dispatch; a subscriber that sends from inside its
/// callback, then closes: the close is heeded at once (the next subscriber
/// does not get that frame), the socket is closed with 1000, `send` throws,
/// and nothing reconnects.
#[wasm_bindgen_test]
async fn websocket_driver_detaches_reconnects_and_reenters() {
    let transport = wasm::websocket_transport(fake_socket_options(20))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let transport = JsValue::from(transport);
    let first = socket_at(0);
    assert_eq!(listeners_of(&first), 4);
    sent(&transport, r#"{"n":1}"#);
    assert_eq!(sent_json(&first), "[]");
    emit(&first, "open", None);
    assert_eq!(sent_json(&first), r#"["{\"n\":1}"]"#);

    emit(&first, "close", Some(r#"{"code":1006}"#.into()));
    assert_eq!(listeners_of(&first), 0);
    sent(&transport, r#"{"n":2}"#);
    wait_for("the reconnect", || sockets() == 2).await;
    let second = socket_at(1);
    assert_eq!(listeners_of(&second), 4);
    emit(&second, "open", None);
    assert_eq!(sent_json(&second), r#"["{\"n\":2}"]"#);

    // A subscriber that throws: reported as an uncaught error is, and the
    // subscribers after it still get the frame.
    throwing_subscriber(&transport);
    let seen = reentrant_subscriber(&transport);
    let other = recording_subscriber(&transport);
    let reports = capture_reports();
    emit(
        &second,
        "message",
        Some(r#"{"data":"{\"reply\":1}"}"#.into()),
    );
    restore_reports(&reports);
    assert_eq!(to_json(&reports), r#"["subscriber bug"]"#);
    assert_eq!(sent_json(&second), r#"["{\"n\":2}","{\"reply\":1}"]"#);
    assert_eq!(to_json(&seen), r#"[{"reply":1}]"#);
    assert_eq!(to_json(&other), r#"[{"reply":1}]"#);

    emit(
        &second,
        "message",
        Some(r#"{"data":"{\"close\":true}"}"#.into()),
    );
    assert_eq!(to_json(&seen), r#"[{"reply":1},{"close":true}]"#);
    assert_eq!(to_json(&other), r#"[{"reply":1}]"#);
    assert_eq!(closed_with(&second), JsValue::from(1000));
    let refused = call_with(&transport, "send", "{}").err();
    assert_eq!(
        refused.map(|e| error_text(&e)).as_deref(),
        Some("ToolmarkError: websocketTransport: closed, not reconnecting")
    );
    // Kept until its close event (the `ws` package emits an error after a
    // close while connecting), then detached.
    assert_eq!(listeners_of(&second), 4);
    emit(&second, "close", Some(r#"{"code":1000}"#.into()));
    assert_eq!(listeners_of(&second), 0);
    pause(60).await;
    assert_eq!(sockets(), 2);
}

/// postMessageTransport's driver: one `message` listener per subscriber,
/// removed by its unsubscribe; a subscriber that replies from inside its
/// callback posts the envelope at once, and one that closes removes every
/// listener, after which `send` throws.
#[wasm_bindgen_test]
fn post_message_driver_detaches_and_reenters() {
    let (source, target) = (fake_window(), fake_window());
    let transport = wasm::post_message_transport(pm_fake_options(&target, &source))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let transport = JsValue::from(transport);
    let seen = reentrant_subscriber(&transport);
    let other = recording_subscriber(&transport);
    assert_eq!(listeners_of(&source), 2);

    post_from(&source, &target, r#"{"reply":1}"#);
    assert_eq!(
        posted_json(&target),
        r#"[[{"toolmark":1,"message":{"reply":1}},"https://agent.test"]]"#
    );
    assert_eq!(to_json(&other), r#"[{"reply":1}]"#);
    unsubscribe(&other);
    assert_eq!(listeners_of(&source), 1);

    post_from(&source, &target, r#"{"close":true}"#);
    assert_eq!(to_json(&seen), r#"[{"reply":1},{"close":true}]"#);
    assert_eq!(listeners_of(&source), 0);
    let refused = call_with(&transport, "send", "{}").err();
    assert_eq!(
        refused.map(|e| error_text(&e)).as_deref(),
        Some("ToolmarkError: postMessageTransport: closed")
    );
}

/// echoTransport's driver: one channel listener per subscriber, stopped by
/// its unsubscribe; a `{ message }` payload unwrapped; a reply sent from
/// inside the callback POSTed; a close from inside it stops every listener,
/// leaves the private channel, and later sends reject.
#[wasm_bindgen_test]
async fn echo_driver_detaches_and_reenters() {
    let echo = fake_echo();
    let transport = wasm::echo_transport(echo_fake_options(&echo))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let transport = JsValue::from(transport);
    let seen = reentrant_subscriber(&transport);
    let other = recording_subscriber(&transport);
    assert_eq!(echo_listeners(&echo), 2);

    broadcast(&echo, r#"{"message":{"reply":1}}"#);
    assert_eq!(echo_json(&echo, "posts"), r#"[{"reply":1}]"#);
    assert_eq!(to_json(&other), r#"[{"reply":1}]"#);
    unsubscribe(&other);
    assert_eq!(echo_listeners(&echo), 1);

    broadcast(&echo, r#"{"close":true}"#);
    assert_eq!(to_json(&seen), r#"[{"reply":1},{"close":true}]"#);
    assert_eq!(echo_listeners(&echo), 0);
    assert_eq!(echo_json(&echo, "left"), r#"["private-toolmark.7.42"]"#);
    let sending =
        call_with(&transport, "send", "{}").unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let refused = JsFuture::from(js_sys::Promise::from(sending)).await.err();
    assert!(refused
        .map(|e| error_text(&e))
        .is_some_and(|e| e.contains("closed")));
}

/// postMessage and Echo drivers: a subscriber that throws, subscribed
/// first, keeps the message from none after it (the fakes call their
/// listeners in one loop, as Pusher does) and is reported through the
/// host's `reportError`, not thrown into the dispatch.
#[wasm_bindgen_test]
fn post_message_and_echo_drivers_report_a_throwing_subscriber() {
    let reports = capture_reports();
    let (source, target) = (fake_window(), fake_window());
    let post_message = wasm::post_message_transport(pm_fake_options(&target, &source))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let post_message = JsValue::from(post_message);
    throwing_subscriber(&post_message);
    let after = recording_subscriber(&post_message);
    post_from(&source, &target, r#"{"n":1}"#);
    assert_eq!(to_json(&after), r#"[{"n":1}]"#);

    let echo = fake_echo();
    let echo_transport = wasm::echo_transport(echo_fake_options(&echo))
        .unwrap_or_else(|e| panic!("{}", error_text(&e)));
    let echo_transport = JsValue::from(echo_transport);
    throwing_subscriber(&echo_transport);
    let after_echo = recording_subscriber(&echo_transport);
    broadcast(&echo, r#"{"message":{"n":2}}"#);
    assert_eq!(to_json(&after_echo), r#"[{"n":2}]"#);
    restore_reports(&reports);
    assert_eq!(to_json(&reports), r#"["subscriber bug","subscriber bug"]"#);
    call_method(&post_message, "close");
    call_method(&echo_transport, "close");
}
