// websocketTransport against a real `ws` WebSocketServer on 127.0.0.1 that plays the
// server/agent: the driver over real sockets, timers and listeners (round trip, reconnect
// backoff, buffered sends, terminal codes, onOpen, frame filtering, close(), freeing).
// The policy's rules (the schedule, the buffer, held frames) are asserted with injected
// time by the unit tests of src/transport/websocket.rs; here one test per rule shows the
// driver reaches it.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocket } from 'ws';
import { perTestCleanups, waitFor, sleep } from './support/ws-agent.mjs';
import { greeterPage } from './support/transport-page.mjs';

const { createToolmark, newId } = await import(new URL('../../pkg/index.js', import.meta.url));
const { bridge } = await import(new URL('../../pkg/bridge/index.js', import.meta.url));
const websocketModule = await import(new URL('../../pkg/bridge/websocket.js', import.meta.url));
const { websocketTransport } = websocketModule;

const MAX_FRAME = 4 * 1048576;
const { cleanups, agentServer } = perTestCleanups(afterEach);

function transport(options) {
  const t = websocketTransport({ WebSocket, ...options });
  cleanups.push(() => t.close());
  return t;
}

/** Every state `t` reports from now on (its `onStatus`). */
function statusesOf(t) {
  const statuses = [];
  t.onStatus((status) => statuses.push(status));
  return statuses;
}

/** The waits the transport chose before each reconnect, in order. */
const delaysOf = (statuses) => statuses.filter((s) => s.state === 'reconnecting').map((s) => s.delayMs);

/** Resolves once `t` says it will not connect again by itself. */
const stopped = (statuses) => waitFor(() => statuses.find((s) => s.state === 'closed' && s.terminal), { what: 'terminal close' });

/**
 * The gaps between the server's attempts are at least the delays the transport
 * reported: its timer is armed with them (no upper bound: a busy machine only
 * makes a gap longer; the schedule itself is the policy's, tested natively).
 */
function assertWaited(attemptTimes, delays) {
  for (let i = 0; i < delays.length && i + 1 < attemptTimes.length; i++) {
    const gap = attemptTimes[i + 1] - attemptTimes[i];
    assert.ok(gap >= delays[i] - 5, `attempt ${i + 2} came ${Math.round(gap)} ms after the one before, under the ${delays[i]} ms chosen`);
  }
}

const page = () => greeterPage({ greet: { asObject: true } });

const call = (clientId, input = { name: 'ada' }) => ({ protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input });

test('the module exports only websocketTransport', () => {
  assert.deepEqual(Object.keys(websocketModule), ['websocketTransport']);
  if (typeof globalThis.WebSocket !== 'function') {
    assert.throws(() => websocketTransport({ url: 'ws://127.0.0.1:1' }), /WebSocket/); // Node 20: no global WebSocket
  }
  assert.throws(() => websocketTransport({ url: 'ws://127.0.0.1:1', WebSocket, maxDelayMs: 0 }), { name: 'ToolmarkError', code: 'invalid_argument' });
  assert.throws(() => websocketTransport({ url: 'ws://127.0.0.1:1', WebSocket, terminalCloseCodes: ['4001'] }), { name: 'ToolmarkError', code: 'invalid_argument' });
  assert.throws(() => websocketTransport({ url: 'not a url', WebSocket }), SyntaxError);
  // The rules are the core's, on the options' JS types: a URL object is its text;
  // null is no WebSocket and no onOpen.
  const opened = [];
  class Recording extends WebSocket {
    constructor(url, ...rest) {
      opened.push(url);
      super(url, ...rest);
    }
  }
  const url = new URL('ws://127.0.0.1:1/socket');
  transport({ url, WebSocket: Recording });
  assert.equal(opened[0], url, 'the URL object itself reaches the constructor');
  const refused = (options, message) => assert.throws(() => websocketTransport({ url: 'ws://127.0.0.1:1', WebSocket, ...options }), { name: 'ToolmarkError', code: 'invalid_argument', message });
  refused({ url: { href: 'ws://127.0.0.1:1' } }, 'websocketTransport: url must be a string or URL');
  assert.throws(() => websocketTransport({ url: 'ws://127.0.0.1:1', WebSocket: null }), { name: 'ToolmarkError', code: 'host_unsupported' });
  refused({ onOpen: null }, 'websocketTransport: onOpen must be a function');
  refused({ terminalCloseCodes: 4001 }, 'websocketTransport: terminalCloseCodes must be an array of integer close codes');
});

test('round trip: the manifest arrives, a call is answered, onOpen authenticates the socket', async () => {
  const server = await agentServer();
  const opened = [];
  const { tm, errors } = page();
  const t = transport({
    url: server.url,
    onOpen: (ws) => {
      opened.push(ws);
      ws.send(JSON.stringify({ auth: 'token-1' })); // e.g. a short-lived token
    },
  });
  const detach = tm.use(bridge({ transport: t }));
  const [manifest] = await waitFor(() => server.messages('manifest').length && server.messages('manifest'), { what: 'manifest' });
  assert.equal(opened.length, 1);
  assert.ok(opened[0] instanceof WebSocket);
  // The auth frame was sent by onOpen before anything the bridge buffered meanwhile.
  assert.deepEqual(server.frames[0].json, { auth: 'token-1' });
  assert.equal(manifest.protocol, 1);
  assert.deepEqual(manifest.tools.map((tool) => tool.name), ['greet']);

  const message = call(manifest.clientId);
  server.latest().send(JSON.stringify(message));
  const [result] = await waitFor(() => server.messages('result').length && server.messages('result'), { what: 'result' });
  assert.deepEqual(result, {
    protocol: 1, type: 'result', clientId: manifest.clientId, id: message.id, result: { status: 'ok', data: { text: 'hello ada' } },
  });
  assert.deepEqual(errors, []);

  // Disposing the bridge closes the transport: a normal close, and no reconnect.
  const statuses = statusesOf(t);
  detach();
  await waitFor(() => server.closes.length === 1, { what: 'close' });
  assert.equal(server.closes[0].code, 1000);
  await stopped(statuses);
  assert.deepEqual(delaysOf(statuses), []);
  assert.equal(server.attempts.length, 1);
});

test("the bridge reads a frame's own text; another subscriber gets the parsed message, and what it does to it changes nothing for the bridge", async () => {
  const server = await agentServer();
  const { tm, errors } = page();
  const t = transport({ url: server.url });
  const seen = [];
  // Subscribed before the bridge: its message object is handed first.
  t.onMessage((message) => {
    seen.push(structuredClone(message));
    message.tool = 'nothing';
    message.input.name = 'mallory';
  });
  tm.use(bridge({ transport: t }));
  const [manifest] = await waitFor(() => server.messages('manifest').length && server.messages('manifest'), { what: 'manifest' });
  // Whitespace and an escape: the page reads the agent's text as sent.
  const id = newId();
  server.latest().send(`{ "protocol": 1, "type": "call", "clientId": "${manifest.clientId}", "id": "${id}",\n  "tool": "greet", "input": { "name": "\\u0061da" } }`);
  const [result] = await waitFor(() => server.messages('result').length && server.messages('result'), { what: 'result' });
  assert.deepEqual(result.result, { status: 'ok', data: { text: 'hello ada' } });
  assert.deepEqual(seen, [{ protocol: 1, type: 'call', clientId: manifest.clientId, id, tool: 'greet', input: { name: 'ada' } }]);
  assert.deepEqual(errors, []);
});

test('reconnects with exponential backoff from 500 ms, capped by maxDelayMs, not reset by a connection that did not last', async () => {
  const server = await agentServer();
  const t = transport({ url: server.url, maxDelayMs: 1200 });
  const statuses = statusesOf(t);
  await waitFor(() => server.sockets.length === 1, { what: 'first connection' });

  server.accept = false; // the server goes down
  const dropped = performance.now();
  server.latest().terminate();
  await waitFor(() => server.attempts.length >= 5, { timeoutMs: 8000, what: 'four reconnect attempts' });
  // 500 ms, doubling, capped at maxDelayMs.
  assert.deepEqual(delaysOf(statuses).slice(0, 4), [500, 1000, 1200, 1200]);
  assertWaited([dropped, ...server.attempts.slice(1, 5)], delaysOf(statuses));

  server.accept = true; // back up: the next attempt connects
  await waitFor(() => server.sockets.length === 2, { timeoutMs: 3000, what: 'reconnection' });
  const received = [];
  t.onMessage((m) => received.push(m));
  server.latest().send(JSON.stringify({ after: 'reconnect' }));
  await waitFor(() => received.length === 1, { what: 'inbound after reconnect' });
  assert.deepEqual(received, [{ after: 'reconnect' }]);

  // That connection lasted less than 10 s: it proved nothing, the delay stays at the cap.
  const before = server.attempts.length;
  const chosen = delaysOf(statuses).length;
  server.latest().terminate();
  await waitFor(() => server.attempts.length > before, { timeoutMs: 3000, what: 'reconnect' });
  assert.deepEqual(delaysOf(statuses).slice(chosen), [1200]);
});

test('the wall clock set back an hour while waiting to reconnect delays nothing: the reconnect comes when the delay told has passed', async (ctx) => {
  const server = await agentServer();
  const t = transport({ url: server.url, maxDelayMs: 200 });
  const statuses = statusesOf(t);
  await waitFor(() => server.sockets.length === 1, { what: 'first connection' });
  server.latest().terminate();
  await waitFor(() => t.status.state === 'reconnecting', { what: 'reconnecting' });
  // An NTP step or a user setting the clock: Date.now jumps back, timers do not.
  const wallClock = Date.now;
  ctx.after(() => {
    Date.now = wallClock;
  });
  Date.now = () => wallClock() - 3_600_000;
  await waitFor(() => server.sockets.length === 2, { what: 'the reconnect' });
  await waitFor(() => t.status.state === 'open', { what: 'open again' });
  assert.deepEqual(delaysOf(statuses), [200]);
});

test('a close code in terminalCloseCodes stops reconnecting; other codes do not', async () => {
  const server = await agentServer();
  const { tm, errors } = page();
  const t = transport({ url: server.url, terminalCloseCodes: [4001], maxDelayMs: 500 });
  const statuses = statusesOf(t);
  tm.use(bridge({ transport: t }));
  await waitFor(() => server.messages('manifest').length === 1, { what: 'manifest' });

  server.latest().close(4000, 'retry'); // not terminal
  await waitFor(() => server.sockets.length === 2, { timeoutMs: 2000, what: 'reconnect after 4000' });

  server.latest().close(4001, 'unauthorized'); // terminal
  await stopped(statuses);
  assert.deepEqual(statuses.at(-1), { state: 'closed', code: 4001, reason: 'unauthorized', terminal: true });
  assert.equal(server.sockets.length, 2);
  assert.equal(server.attempts.length, 2);

  // The transport is finished: a send fails, and the bridge reports transport_failed.
  assert.throws(() => t.send({ x: 1 }), /closed/);
  tm.register({ name: 'later', description: 'A later tool', run: () => 1 }); // revision → manifest
  await waitFor(() => errors.some((e) => e.code === 'transport_failed'), { what: 'transport_failed' });
});

test('a rejecting onOpen stops the transport; a resolving one lets traffic through', async () => {
  const server = await agentServer();
  let opens = 0;
  const received = [];
  const t = transport({
    url: server.url,
    maxDelayMs: 500,
    onOpen: async (ws) => {
      opens++;
      assert.ok(ws instanceof WebSocket);
      if (opens === 1) return; // first connection: authenticated
      throw new Error('token expired');
    },
  });
  t.onMessage((m) => received.push(m));
  const statuses = statusesOf(t);
  await waitFor(() => server.sockets.length === 1, { what: 'first connection' });
  await waitFor(() => opens === 1, { what: 'onOpen' });
  server.latest().terminate(); // dropped: reconnects, onOpen rejects this time
  await waitFor(() => server.sockets.length === 2, { timeoutMs: 2000, what: 'reconnect' });
  await waitFor(() => server.closes.length === 2, { what: 'client closes the rejected socket' });
  await stopped(statuses);
  assert.equal(opens, 2);
  assert.equal(server.attempts.length, 2);
  assert.throws(() => t.send({ x: 1 }), /closed/);
  assert.deepEqual(received, []);
});

test('what the transport sends into a socket found closing (its close frame in, its close event not yet) is buffered and goes out on the reconnect', async () => {
  const server = await agentServer();
  // The server answers onOpen's authentication, then closes the first socket at once
  // (a restart): onOpen settles while that socket is closing, and the buffered
  // manifest is flushed then.
  server.onConnection = (socket) => {
    const first = server.sockets.length === 1;
    socket.on('message', (data) => {
      if (data.toString() !== 'auth') return;
      socket.send('ok');
      if (first) socket.close(1012, 'service restart');
    });
  };
  const t = transport({
    url: server.url,
    maxDelayMs: 100,
    onOpen: (socket) =>
      new Promise((resolve) => {
        socket.addEventListener('message', (event) => event.data === 'ok' && resolve(), { once: true });
        socket.send('auth');
      }),
  });
  const statuses = statusesOf(t);
  const { tm } = greeterPage();
  tm.use(bridge({ transport: t }));
  const manifests = () => server.frames.filter((f) => f.json?.type === 'manifest');
  await waitFor(() => manifests().length === 1, { what: 'the manifest' });
  assert.equal(manifests()[0].socket, server.sockets[1], 'sent on the second socket');
  assert.deepEqual(
    statuses.map((s) => s.state),
    ['open', 'closed', 'reconnecting', 'connecting', 'open'],
  );
});

test('a result answered while disconnected survives the 150 manifests of tools registered and unregistered before the reconnect: only the latest manifest is buffered', async () => {
  const server = await agentServer();
  const { tm, errors } = page();
  let release;
  const released = new Promise((resolve) => {
    release = resolve;
  });
  let started;
  const running = new Promise((resolve) => {
    started = resolve;
  });
  tm.register({ name: 'slow', description: 'Answers when released', run: async () => (started(), await released, 'done') });
  const t = transport({ url: server.url, maxDelayMs: 100 });
  tm.use(bridge({ transport: t }));
  const manifest = await waitFor(() => server.messages('manifest').at(-1)?.tools.length === 2 && server.messages('manifest').at(-1), { what: 'manifest' });
  const id = newId();
  server.latest().send(JSON.stringify({ protocol: 1, type: 'call', clientId: manifest.clientId, id, tool: 'slow', input: {} }));
  await running;
  server.accept = false; // the server goes down with the call in flight
  server.latest().terminate();
  await waitFor(() => t.status.state === 'reconnecting', { what: 'reconnecting' });
  release(); // answered while disconnected
  await waitFor(() => t.status.state === 'reconnecting' && t.status.attempt >= 2, { what: 'a failed reconnect after the answer' });
  // The page moves on meanwhile: 75 tools come and go, a manifest per revision.
  for (let i = 0; i < 75; i++) tm.register({ name: `page.tool${i}`, description: 'A tool', run: () => i })();
  const before = server.frames.length;
  server.accept = true;
  await waitFor(() => server.messages('result').length === 1 && server.frames.length > before + 1, { what: 'the result and the manifest' });
  const after = server.frames.slice(before).map((f) => f.json);
  assert.deepEqual(after.map((m) => [m.type, m.rev]), [['result', undefined], ['manifest', tm.rev]]);
  assert.deepEqual(after[0], { protocol: 1, type: 'result', clientId: manifest.clientId, id, result: { status: 'ok', data: 'done' } });
  assert.deepEqual(after[1].tools.map((tool) => tool.name), ['greet', 'slow']);
  // Only the reconnects refused while the server was down.
  assert.ok(errors.length > 0 && errors.every((e) => /^transport: connection attempt \d+ failed \(code 1006\); retrying$/.test(e.message)), JSON.stringify(errors));
});

test('an onOpen returning a value whose then getter throws stops the transport, as a rejection does', async () => {
  const server = await agentServer();
  const t = transport({
    url: server.url,
    onOpen: () => ({
      get then() {
        throw new Error('then unreadable');
      },
    }),
  });
  const statuses = statusesOf(t);
  await stopped(statuses);
  assert.deepEqual(statuses.map((s) => [s.state, s.reason]), [['closed', 'onOpen rejected']]);
});

test('binary, non-JSON and oversized frames are dropped unparsed', async () => {
  const server = await agentServer();
  const { tm, errors } = page();
  const t = transport({ url: server.url });
  const seen = [];
  t.onMessage((m) => seen.push(m));
  tm.use(bridge({ transport: t }));
  const [manifest] = await waitFor(() => server.messages('manifest').length && server.messages('manifest'), { what: 'manifest' });
  const socket = server.latest();

  const parse = JSON.parse;
  let parsedLengths = [];
  JSON.parse = function (text, ...rest) {
    if (typeof text === 'string') parsedLengths.push(text.length);
    return parse.call(this, text, ...rest);
  };
  try {
    socket.send(Buffer.from(JSON.stringify(call(manifest.clientId))), { binary: true });
    socket.send('{"protocol": 1, "type": "call", not json');
    // One UTF-16 code unit too many (the emoji is two code units, 4 UTF-8 bytes).
    const pad = (units) => {
      const head = `{"protocol":1,"type":"call","clientId":"${manifest.clientId}","id":"${newId()}","tool":"greet","input":{"name":"😀`;
      const tail = '"}}';
      return head + 'a'.repeat(units - head.length - tail.length) + tail;
    };
    const oversized = pad(MAX_FRAME + 1);
    assert.equal(oversized.length, MAX_FRAME + 1);
    socket.send(oversized);
    const good = call(manifest.clientId, { name: 'grace' });
    socket.send(JSON.stringify(good));
    const results = await waitFor(() => server.messages('result').length && server.messages('result'), { what: 'result' });
    assert.equal(results.length, 1);
    assert.equal(results[0].id, good.id);
    assert.equal(seen.length, 1);
    assert.ok(parsedLengths.every((n) => n <= MAX_FRAME), 'the oversized frame was never parsed');
    assert.deepEqual(errors, []); // dropped by the transport, so the bridge never saw them

    // Exactly at the limit, a frame passes the transport; the bridge's own 1 MiB limit drops it.
    parsedLengths = [];
    socket.send(pad(MAX_FRAME));
    await waitFor(() => seen.length === 2, { what: 'frame at the limit' });
    assert.ok(parsedLengths.includes(MAX_FRAME));
    await waitFor(() => errors.some((e) => e.code === 'invalid_message'), { what: 'bridge limit' });
  } finally {
    JSON.parse = parse;
  }
});

test('close() stops reconnecting, also during a backoff wait', async () => {
  const server = await agentServer();
  const t = transport({ url: server.url, maxDelayMs: 500 });
  // Open on the client's side too (a frame sent while connecting is flushed
  // on open): closing a socket still connecting fails it (1006), no close frame.
  t.send({ type: 'hello' });
  await waitFor(() => server.messages('hello').length === 1, { what: 'open connection' });
  t.close();
  await waitFor(() => server.closes.length === 1, { what: 'close frame' });
  assert.equal(server.closes[0].code, 1000);
  assert.throws(() => t.send({ x: 1 }), /closed/);

  const t2 = transport({ url: server.url, maxDelayMs: 500 });
  const statuses = statusesOf(t2);
  await waitFor(() => server.sockets.length === 2, { what: 'second connection' });
  server.accept = false;
  server.latest().terminate();
  await waitFor(() => server.attempts.length === 3, { timeoutMs: 2000, what: 'refused attempt' });
  await waitFor(() => statuses.at(-1).state === 'reconnecting', { what: 'waiting for the next attempt' });
  t2.close(); // while waiting for the next attempt
  await stopped(statuses);
  assert.deepEqual(statuses.at(-1), { state: 'closed', code: 1000, reason: 'closed by close()', terminal: true });
  assert.equal(server.attempts.length, 3);
});

/**
 * A full GC, then a turn for the FinalizationRegistry callbacks that free
 * the Rust side of collected JS handles (transports, bridges).
 */
setFlagsFromString('--expose-gc');
const fullGc = runInNewContext('gc');
async function collect() {
  for (let i = 0; i < 3; i++) {
    fullGc();
    await sleep(10);
  }
}

/** The driver's counters: running transports and the wasm memory's size. */
const stats = (t) => Object.getPrototypeOf(t).constructor.__stats();
const LISTENED = ['open', 'message', 'close', 'error'];

test("the socket's four listeners are removed on each reconnect and on close", async () => {
  const server = await agentServer();
  const sockets = [];
  const t = transport({ url: server.url, maxDelayMs: 200, onOpen: (ws) => sockets.push(ws) });
  await waitFor(() => sockets.length === 1, { what: 'first connection' });
  assert.deepEqual(LISTENED.map((type) => sockets[0].listenerCount(type)), [1, 1, 1, 1]);
  assert.equal(sockets[0].binaryType, 'arraybuffer');
  server.latest().terminate();
  await waitFor(() => sockets.length === 2, { timeoutMs: 3000, what: 'reconnection' });
  assert.deepEqual(LISTENED.map((type) => sockets[0].listenerCount(type)), [0, 0, 0, 0]);
  assert.deepEqual(LISTENED.map((type) => sockets[1].listenerCount(type)), [1, 1, 1, 1]);
  assert.deepEqual(stats(t).transports, 1);
  assert.deepEqual(stats(t).sockets, 1);
  t.close();
  assert.equal(stats(t).transports, 0);
  // Kept until the socket's close event (ws emits `error` after a close while connecting).
  await waitFor(() => stats(t).sockets === 0, { what: 'close event' });
  assert.deepEqual(LISTENED.map((type) => sockets[1].listenerCount(type)), [0, 0, 0, 0]);
  t.close(); // idempotent
});

test("the bridge's limit applies to a frame's message, on its UTF-8 bytes", async () => {
  const server = await agentServer();
  const { tm, errors } = page();
  const t = transport({ url: server.url });
  tm.use(bridge({ transport: t }));
  const [manifest] = await waitFor(() => server.messages('manifest').length && server.messages('manifest'), { what: 'manifest' });
  server.latest().send(JSON.stringify(call(manifest.clientId)));
  await waitFor(() => server.messages('result').length === 1, { what: 'result' });
  const pad = 'é'.repeat(600_000); // 600,000 units, 1.2 MB of UTF-8: over 1 MiB
  server.latest().send(JSON.stringify(call(manifest.clientId, { name: pad })));
  await waitFor(() => errors.some((e) => e.code === 'invalid_message'), { what: 'bridge limit' });
  assert.match(errors[0].message, /exceeds maxMessageBytes 1048576/);
});

test('1,000 sockets opened and closed (half with an onOpen that holds its transport): the transport count returns to zero, wasm memory does not grow', { timeout: 120000 }, async () => {
  const server = await agentServer();
  const tm = createToolmark();
  tm.register({ name: 'greet', description: 'Greets', run: () => 'hi' });
  async function cycle(count, batch = 100) {
    for (let done = 0; done < count; done += batch) {
      const before = server.messages('manifest').length;
      const detaches = [];
      for (let i = 0; i < batch; i++) {
        // Half with an onOpen that refers to its own transport: the
        // transport must let go of it once closed, or neither is ever freed.
        const t = websocketTransport({ url: server.url, WebSocket, onOpen: i % 2 ? () => void t.constructor : undefined });
        detaches.push([t, tm.use(bridge({ transport: t }))]);
      }
      await waitFor(() => server.messages('manifest').length === before + batch, { what: 'manifests' });
      assert.equal(stats(detaches[0][0]).transports, batch);
      for (const [, detach] of detaches) detach(); // closes the transport
      assert.equal(stats(detaches[0][0]).transports, 0);
      await waitFor(() => stats(detaches[0][0]).sockets === 0, { what: 'close events' });
      // The handles are garbage now; their Rust side goes with them.
      detaches.length = 0;
      await collect();
    }
  }
  await cycle(100); // warm-up: the allocator's high-water mark
  const probe = websocketTransport({ url: server.url, WebSocket });
  probe.close(); // while connecting
  await waitFor(() => stats(probe).sockets === 0, { what: 'probe closed' });
  const before = stats(probe);
  await cycle(1000);
  const afterStats = stats(probe);
  assert.deepEqual(before, { transports: 0, sockets: 0, memoryBytes: afterStats.memoryBytes, heldDropped: afterStats.heldDropped }, 'wasm memory grew');
  assert.equal(afterStats.sockets, 0);
  // Every socket the server accepted (the probe's never connected) was closed by the page.
  assert.ok(server.sockets.length >= 1100);
  await waitFor(() => server.closes.length === server.sockets.length, { timeoutMs: 10000, what: 'every socket closed' });
  assert.ok(server.closes.every((c) => c.code === 1000 || c.code === 1006));
});

test('throwing callbacks never break the transport: a listener that throws, an onOpen that throws synchronously', async (ctx) => {
  // Node has no reportError: a subscriber's throw goes to console.error.
  const logged = [];
  ctx.mock.method(console, 'error', (error) => logged.push(String(error?.message)));
  const server = await agentServer();
  const { tm, errors } = page();
  const t = transport({ url: server.url });
  t.onMessage(() => {
    throw new Error('listener bug');
  });
  tm.use(bridge({ transport: t }));
  const [manifest] = await waitFor(() => server.messages('manifest').length && server.messages('manifest'), { what: 'manifest' });
  server.latest().send(JSON.stringify(call(manifest.clientId)));
  await waitFor(() => server.messages('result').length === 1, { what: 'result despite the throwing listener' });
  assert.deepEqual(errors, []);
  assert.ok(logged.length >= 1 && logged.every((m) => m === 'listener bug'), JSON.stringify(logged));

  const t2 = transport({
    url: server.url,
    maxDelayMs: 200,
    onOpen: () => {
      throw new Error('sync throw');
    },
  });
  const statuses = statusesOf(t2);
  await waitFor(() => server.closes.length === 1, { what: 'the socket closed after onOpen threw' });
  await stopped(statuses);
  assert.deepEqual(delaysOf(statuses), []);
  assert.equal(server.sockets.length, 2);
  assert.throws(() => t2.send({ x: 1 }), /closed, not reconnecting/);
  assert.throws(() => t2.onMessage('not a function'), { name: 'ToolmarkError', code: 'invalid_argument' });
});

// Frames held while onOpen is pending are bounded in bytes (4 MiB of UTF-8
// per connection, oldest evicted; a frame longer than that alone is
// dropped), and each crosses into wasm memory once: 50 frames at the frame
// limit (4 × 1048576 UTF-16 units, 8 MiB of UTF-8 each) and 10 of 1 MB
// leave wasm memory within a few frames of where it was.
test('frames held while onOpen is pending are bounded in bytes: wasm memory stays bounded, the newest are delivered in order', { timeout: 120000 }, async () => {
  const server = await agentServer();
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const received = [];
  // Counted by a listener added after the transport's: when it runs, the
  // transport has handled the frame.
  let handled = 0;
  const t = transport({
    url: server.url,
    onOpen: (ws) => {
      ws.addEventListener('message', () => handled++);
      return gate;
    },
  });
  t.onMessage((m) => received.push(m));
  await waitFor(() => server.sockets.length === 1 && handled === 0, { what: 'connection' });
  const socket = server.latest();
  const atLimit = JSON.stringify({ pad: 'é'.repeat(MAX_FRAME - 10) });
  assert.equal(atLimit.length, MAX_FRAME);
  const small = (i) => JSON.stringify({ i, pad: 'x'.repeat(1_000_000 - 20) });
  const start = stats(t);
  // The first frame settles the allocator's high-water mark for one frame.
  socket.send(atLimit);
  await waitFor(() => handled === 1, { timeoutMs: 20000, what: 'the first frame' });
  const before = stats(t);
  for (let i = 0; i < 50; i++) socket.send(atLimit);
  for (let i = 0; i < 10; i++) socket.send(small(i));
  await waitFor(() => handled === 61, { timeoutMs: 60000, what: 'the frames' });
  const after = stats(t);
  const grew = after.memoryBytes - before.memoryBytes;
  assert.ok(grew <= 8 * 1048576, `wasm memory grew by ${grew} bytes for 60 frames held while onOpen was pending`);
  const total = after.memoryBytes - start.memoryBytes;
  assert.ok(total <= 24 * 1048576, `wasm memory grew by ${total} bytes for 61 frames held while onOpen was pending`);
  // 51 too long to hold, then 6 of the 1 MB ones evicted to keep 4 (4 MB ≤ 4 MiB).
  assert.equal(after.heldDropped - start.heldDropped, 57);
  assert.deepEqual(received, []);
  release();
  await waitFor(() => received.length === 4, { what: 'the held frames' });
  // A frame after them comes after them: nothing else was held.
  socket.send(JSON.stringify({ i: 'after' }));
  await waitFor(() => received.length === 5, { what: 'the frame after' });
  assert.deepEqual(received.map((m) => m.i), [6, 7, 8, 9, 'after']);
});
