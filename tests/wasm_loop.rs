//! The boundary's loop in real headless Chromium (`node js/build/wasm-test.mjs`):
//! the order in which the driver hands out the core's outputs (messages,
//! then events, then runs), the page's timer for the core's deadline, tool
//! promises (resolved, rejected, a bare thenable), and re-entrancy: page
//! code the driver calls calling back into the registry, which must take
//! effect, never be skipped.
#![cfg(target_arch = "wasm32")]

use toolmark_bridge::wasm;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check, what) => {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await tick(5);
  }
  throw new Error('timed out waiting for ' + what);
};

// A JS transport that logs what the bridge sends; `deliver` hands it an
// agent message.
function transport(log, onSend) {
  const t = {
    deliver: null,
    send(message) {
      log.push('send ' + message.type + (message.type === 'result' ? ' ' + message.id : ''));
      t.sent.push(message);
      if (onSend) onSend(message, t);
    },
    sent: [],
    onMessage(callback) {
      t.deliver = callback;
      return () => { t.deliver = null; };
    },
  };
  return t;
}

const call = (clientId, id, tool, input) =>
  ({ protocol: 1, type: 'call', clientId, id, tool, input });

export async function order_of_outputs(tm, bridge) {
  const log = [];
  tm.events.on('error', (e) => log.push('error ' + e.code));
  const t = transport(log);
  tm.use(bridge({ transport: t }));
  // dev mode with a budget of 0: registering sends a manifest and raises
  // an error event in the same flush; the message goes first.
  tm.register({ name: 'double', description: 'd', run: (input) => {
    log.push('run');
    return { twice: input.n * 2 };
  } });
  log.push('registered');
  const clientId = t.sent[0].clientId;
  t.deliver(call(clientId, 'c1', 'double', { n: 2 }));
  // The run starts in a microtask after the flush that asked for it.
  log.push('delivered');
  await until(() => t.sent.some((m) => m.type === 'result'), 'the result');
  return { log, data: t.sent.find((m) => m.type === 'result').result.data };
}

export async function expiry_by_timer(tm) {
  let heard = 0;
  tm.subscribePending(() => { heard++; });
  tm.register({ name: 'send', description: 'd', hints: { consequential: true }, run: () => 'sent' });
  // The delays the page's timer is armed with while the call is made:
  // the host's setTimeout watched, and still called.
  const delays = [];
  const hostSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = (callback, delay, ...rest) => {
    delays.push(delay);
    return hostSetTimeout(callback, delay, ...rest);
  };
  let first;
  try {
    first = await tm.call('send', {}, { caller: 'inapp' });
  } finally {
    globalThis.setTimeout = hostSetTimeout;
  }
  const pending = tm.pendingConfirmations().length;
  const heardBefore = heard;
  // confirmExpiryMs is 30: the page's timer expires it, nobody calls in.
  await until(() => tm.pendingConfirmations().length === 0, 'the expiry');
  const late = await tm.confirmPending(first.confirmId, true);
  return { status: first.status, pending, heardBefore, heard, late, delays };
}

export function promise_tools(tm) {
  tm.register({ name: 'later', description: 'd',
    run: async () => { await tick(5); return { waited: true }; } });
  tm.register({ name: 'rejects', description: 'd',
    run: () => Promise.reject(new Error('nope')) });
  tm.register({ name: 'thenable', description: 'd',
    run: () => ({ then(resolve) { setTimeout(() => resolve({ via: 'then' }), 1); } }) });
  tm.register({ name: 'throwing_then', description: 'd',
    run: () => ({ then() { throw new TypeError('bad then'); } }) });
}

export async function tool_registers_a_tool(tm) {
  let unregister = null;
  tm.register({ name: 'maker', description: 'd', run: () => {
    unregister = tm.register({ name: 'made', description: 'd', run: () => 'made it' });
    return { rev: tm.rev };
  } });
  const made = await tm.call('maker', {});
  const names = tm.manifest().map((t) => t.name);
  const ran = await tm.call('made', {});
  unregister();
  const gone = await tm.call('made', {});
  return { made, names, ran, gone, unregisterType: typeof unregister };
}

export async function error_listener_calls_in(tm) {
  let inner = null;
  tm.events.on('error', (e) => {
    if (e.code === 'tool_threw' && !inner) inner = tm.call('ok', { n: 5 });
  });
  tm.register({ name: 'throws', description: 'd', run: () => { throw new Error('boom'); } });
  tm.register({ name: 'ok', description: 'd', run: (input) => ({ n: input.n }) });
  const outer = await tm.call('throws', {});
  await until(() => inner !== null, 'the listener');
  return { outer, inner: await inner };
}

export async function pending_listener_confirms(tm) {
  let runs = 0;
  let decided = null;
  tm.register({ name: 'send', description: 'd', hints: { consequential: true },
    run: () => { runs++; return 'sent'; } });
  tm.subscribePending(() => {
    const [first] = tm.pendingConfirmations();
    if (first && !decided) decided = tm.confirmPending(first.confirmId, true);
  });
  const asked = await tm.call('send', {}, { caller: 'inapp' });
  await until(() => decided !== null, 'the pending listener');
  const final = await decided;
  return { asked: asked.status, final, runs, left: tm.pendingConfirmations().length };
}

export async function send_delivers_back(tm, bridge) {
  const log = [];
  let answered = false;
  const t = transport(log, (message, t) => {
    // An agent answering the manifest at once, from inside send.
    if (message.type === 'manifest' && message.tools.length && !answered) {
      answered = true;
      t.deliver(call(message.clientId, 'c1', 'double', { n: 4 }));
      log.push('delivered inside send');
    }
  });
  tm.use(bridge({ transport: t }));
  tm.register({ name: 'double', description: 'd', run: (input) => ({ twice: input.n * 2 }) });
  await until(() => t.sent.some((m) => m.type === 'result'), 'the result');
  return { log, result: t.sent.find((m) => m.type === 'result').result };
}

export function options(dev, budget, expiry) {
  return { dev, toolBudget: budget, confirmExpiryMs: expiry };
}
export function json(value) { return JSON.stringify(value); }
"#)]
extern "C" {
    async fn order_of_outputs(tm: JsValue, bridge: JsValue) -> JsValue;
    async fn expiry_by_timer(tm: JsValue) -> JsValue;
    fn promise_tools(tm: JsValue);
    async fn tool_registers_a_tool(tm: JsValue) -> JsValue;
    async fn error_listener_calls_in(tm: JsValue) -> JsValue;
    async fn pending_listener_confirms(tm: JsValue) -> JsValue;
    async fn send_delivers_back(tm: JsValue, bridge: JsValue) -> JsValue;
    fn options(dev: bool, budget: u32, expiry: u32) -> JsValue;
    fn json(value: &JsValue) -> String;
}

/// A registry and what a test needs of it, as the JS values the page uses.
fn registry(dev: bool, budget: u32, expiry: u32) -> JsValue {
    let tm = wasm::create_toolmark(options(dev, budget, expiry));
    JsValue::from(tm.unwrap_or_else(|_| panic!("createToolmark")))
}

/// The `bridge` function as the page sees it.
fn bridge_fn() -> JsValue {
    Closure::<dyn Fn(JsValue) -> Result<JsValue, JsValue>>::new(|options| {
        wasm::bridge(options).map(JsValue::from)
    })
    .into_js_value()
}

fn get(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &key.into()).unwrap_or_default()
}

async fn call(tm: &JsValue, name: &str) -> String {
    let call: js_sys::Function = get(tm, "call").into();
    let promise = call
        .call2(tm, &name.into(), &js_sys::Object::new())
        .unwrap_or_else(|_| panic!("tm.call threw"));
    let result = JsFuture::from(js_sys::Promise::from(promise)).await;
    json(&result.unwrap_or_else(|_| panic!("tm.call rejected")))
}

#[wasm_bindgen_test]
async fn messages_go_out_before_events_and_runs_start_after_the_flush() {
    let tm = registry(true, 0, 600_000);
    let out = order_of_outputs(tm, bridge_fn()).await;
    assert_eq!(
        json(&get(&out, "log")),
        r#"["send manifest","send manifest","error tool_budget_exceeded","registered","delivered","run","send result c1"]"#,
        "the attach manifest; then the revision's manifest before its event; the run after the call's flush"
    );
    assert_eq!(json(&get(&out, "data")), r#"{"twice":4}"#);
}

#[wasm_bindgen_test]
async fn the_page_timer_fires_at_the_cores_deadline() {
    let tm = registry(false, 40, 30);
    let out = expiry_by_timer(tm).await;
    assert_eq!(
        get(&out, "status").as_string().as_deref(),
        Some("needs_confirmation")
    );
    assert_eq!(get(&out, "pending").as_f64(), Some(1.0));
    let (before, after) = (get(&out, "heardBefore"), get(&out, "heard"));
    assert_eq!(before.as_f64(), Some(1.0), "heard the confirmation arrive");
    assert_eq!(
        after.as_f64(),
        Some(2.0),
        "and heard it expire, with no call made"
    );
    // Armed for the deadline, 30 ms after the call (confirmExpiryMs), and
    // not later: what setTimeout was given, not how long it took.
    let delays: Vec<f64> = js_sys::Array::from(&get(&out, "delays"))
        .iter()
        .map(|ms| ms.as_f64().unwrap_or(f64::NAN))
        .collect();
    assert!(
        !delays.is_empty() && delays.iter().all(|ms| (0.0..=30.0).contains(ms)),
        "armed with {delays:?} ms"
    );
    assert_eq!(
        json(&get(&out, "late")),
        r#"{"status":"refused","code":"confirmation_expired","message":"The confirmation expired or was already used"}"#
    );
}

#[wasm_bindgen_test]
async fn tools_may_return_promises_and_thenables() {
    let tm = registry(false, 40, 600_000);
    let errors = js_sys::Array::new();
    let on: js_sys::Function = get(&get(&tm, "events"), "on").into();
    let record = {
        let errors = errors.clone();
        Closure::<dyn Fn(JsValue)>::new(move |e: JsValue| {
            errors.push(&e);
        })
        .into_js_value()
    };
    let _ = on.call2(&get(&tm, "events"), &"error".into(), &record);
    promise_tools(tm.clone());
    assert_eq!(
        call(&tm, "later").await,
        r#"{"status":"ok","data":{"waited":true}}"#
    );
    assert_eq!(
        call(&tm, "rejects").await,
        r#"{"status":"error","message":"Tool failed"}"#
    );
    assert_eq!(
        call(&tm, "thenable").await,
        r#"{"status":"ok","data":{"via":"then"}}"#
    );
    assert_eq!(
        call(&tm, "throwing_then").await,
        r#"{"status":"error","message":"Tool failed"}"#
    );
    assert_eq!(
        json(&errors),
        r#"[{"code":"tool_threw","message":"Error: nope","tool":"rejects"},{"code":"tool_threw","message":"TypeError: bad then","tool":"throwing_then"}]"#,
        "the rejection's and the throwing then's detail go to the error event only"
    );
}

#[wasm_bindgen_test]
async fn a_tool_registers_a_tool_during_its_run() {
    let tm = registry(false, 40, 600_000);
    let out = tool_registers_a_tool(tm).await;
    assert_eq!(
        json(&get(&out, "made")),
        r#"{"status":"ok","data":{"rev":2}}"#,
        "the registration took effect inside the run"
    );
    assert_eq!(json(&get(&out, "names")), r#"["made","maker"]"#);
    assert_eq!(
        json(&get(&out, "ran")),
        r#"{"status":"ok","data":"made it"}"#
    );
    assert_eq!(
        get(&get(&out, "gone"), "code").as_string().as_deref(),
        Some("unknown_tool"),
        "the unregister it got back works"
    );
}

#[wasm_bindgen_test]
async fn an_error_listener_calls_a_tool() {
    let tm = registry(false, 40, 600_000);
    let out = error_listener_calls_in(tm).await;
    assert_eq!(
        json(&get(&out, "outer")),
        r#"{"status":"error","message":"Tool failed"}"#
    );
    assert_eq!(
        json(&get(&out, "inner")),
        r#"{"status":"ok","data":{"n":5}}"#
    );
}

#[wasm_bindgen_test]
async fn a_pending_listener_confirms_what_it_hears_of() {
    let tm = registry(false, 40, 600_000);
    let out = pending_listener_confirms(tm).await;
    assert_eq!(
        get(&out, "asked").as_string().as_deref(),
        Some("needs_confirmation")
    );
    assert_eq!(
        json(&get(&out, "final")),
        r#"{"status":"ok","data":"sent"}"#
    );
    assert_eq!(get(&out, "runs").as_f64(), Some(1.0));
    assert_eq!(get(&out, "left").as_f64(), Some(0.0));
}

#[wasm_bindgen_test]
async fn a_transport_send_delivers_a_call_back_synchronously() {
    let tm = registry(false, 40, 600_000);
    let out = send_delivers_back(tm, bridge_fn()).await;
    assert_eq!(
        json(&get(&out, "log")),
        r#"["send manifest","send manifest","delivered inside send","send result c1"]"#
    );
    assert_eq!(
        json(&get(&out, "result")),
        r#"{"status":"ok","data":{"twice":8}}"#
    );
}
