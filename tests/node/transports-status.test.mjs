// Connection state (docs/api.md, "Connection state"): websocketTransport against a real
// `ws` server that refuses, accepts, drops and closes for good; what the transport's
// `status`/`onStatus` tell, what the bridge tells as `tm.events.on('status')`, and the
// `transport_failed` error event for each attempt that never opened. No timing is
// asserted: the schedule itself is tested with injected time (src/transport/websocket.rs).
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { perTestCleanups, waitFor } from './support/ws-agent.mjs';
import { greeterPage, nonFunctionRefusals } from './support/transport-page.mjs';
import { inOwnProcess } from './support/own-process.mjs';

const { bridge } = await import(new URL('../../pkg/bridge/index.js', import.meta.url));
const { websocketTransport } = await import(new URL('../../pkg/bridge/websocket.js', import.meta.url));
const { createInPageChannel } = await import(new URL('../../pkg/bridge/in-page.js', import.meta.url));
const { postMessageTransport } = await import(new URL('../../pkg/bridge/post-message.js', import.meta.url));

const { cleanups, agentServer } = perTestCleanups(afterEach);

/** A page attached over a websocketTransport to `url`, recording every state and error. */
function watchedPage(url, options = {}) {
  const { tm, errors } = greeterPage();
  const transport = websocketTransport({ url, WebSocket, maxDelayMs: 100, ...options });
  cleanups.push(() => transport.close());
  const told = []; // what transport.onStatus tells
  const bridged = []; // what tm.events.on('status') tells
  transport.onStatus((status) => told.push(status));
  tm.events.on('status', (status) => bridged.push(status));
  const detach = tm.use(bridge({ transport }));
  return { tm, errors, transport, told, bridged, detach };
}

const closed1006 = { state: 'closed', code: 1006, reason: '', terminal: false };

test("the app's close() while an attempt is under way ends it without a transport_failed error: at once, and in a reconnect's connecting", async () => {
  const server = await agentServer();
  server.accept = false;
  const first = watchedPage(server.url);
  first.transport.close();
  assert.deepEqual(first.bridged, [{ state: 'connecting', attempt: 1 }, { state: 'closed', code: 1000, reason: 'closed by close()', terminal: true }]);
  assert.deepEqual(first.errors, []);

  const page = watchedPage(server.url);
  page.transport.onStatus((status) => {
    if (status.state === 'connecting' && status.attempt === 2) page.transport.close();
  });
  await waitFor(() => page.transport.status.state === 'closed' && page.transport.status.terminal, { what: 'closed by close()' });
  assert.deepEqual(page.bridged.slice(-2), [{ state: 'connecting', attempt: 2 }, { state: 'closed', code: 1000, reason: 'closed by close()', terminal: true }]);
  // Only the attempt the server refused failed.
  assert.deepEqual(page.errors, [{ code: 'transport_failed', message: 'transport: connection attempt 1 failed (code 1006); retrying' }]);
});

test('a server that refuses: each attempt is told, closed and retried, and is a transport_failed error', async () => {
  const server = await agentServer();
  server.accept = false;
  const page = watchedPage(server.url);
  assert.deepEqual(page.transport.status, { state: 'connecting', attempt: 1 });
  await waitFor(() => page.told.length >= 6, { what: 'two failed attempts' });
  assert.deepEqual(page.told.slice(0, 6), [
    closed1006,
    { state: 'reconnecting', attempt: 2, delayMs: 100 },
    { state: 'connecting', attempt: 2 },
    closed1006,
    { state: 'reconnecting', attempt: 3, delayMs: 100 },
    { state: 'connecting', attempt: 3 },
  ]);
  // The bridge attached while connecting: it told that state first, then the same ones.
  assert.deepEqual(page.bridged.slice(0, 7), [{ state: 'connecting', attempt: 1 }, ...page.told.slice(0, 6)]);
  assert.deepEqual(page.errors.slice(0, 2), [
    { code: 'transport_failed', message: 'transport: connection attempt 1 failed (code 1006); retrying' },
    { code: 'transport_failed', message: 'transport: connection attempt 2 failed (code 1006); retrying' },
  ]);
  assert.ok(server.attempts.length >= 2);
  assert.equal(server.messages('manifest').length, 0);

  // The server comes back: the next attempt opens, the buffered manifest goes out, no error.
  server.accept = true;
  await waitFor(() => page.transport.status.state === 'open', { what: 'open' });
  const failures = page.errors.length;
  await waitFor(() => server.messages('manifest').length === 1, { what: 'the manifest' });
  assert.deepEqual(page.told.at(-1), { state: 'open' });
  assert.deepEqual(page.bridged.at(-1), { state: 'open' });

  // It drops the connection: closed, then a reconnect counted from 1 again, open again.
  const before = page.told.length;
  server.latest().terminate();
  await waitFor(() => page.told.length >= before + 4, { what: 'the reconnect' });
  assert.deepEqual(page.told.slice(before, before + 4), [
    closed1006,
    { state: 'reconnecting', attempt: 1, delayMs: 100 },
    { state: 'connecting', attempt: 1 },
    { state: 'open' },
  ]);
  assert.equal(page.errors.length, failures, 'a connection that opened and dropped is no failed attempt');

  // Disposing the bridge closes the transport for good; the bridge no longer tells.
  const bridgedBefore = page.bridged.length;
  page.detach();
  assert.deepEqual(page.transport.status, { state: 'closed', code: 1000, reason: 'closed by close()', terminal: true });
  assert.deepEqual(page.told.at(-1), page.transport.status);
  assert.equal(page.bridged.length, bridgedBefore);
});

test('a terminal close code and a rejecting onOpen end in a terminal closed state with code and reason', async () => {
  const server = await agentServer();
  server.onConnection = (socket) => setTimeout(() => socket.close(4001, 'unauthorized'), 10);
  const page = watchedPage(server.url, { terminalCloseCodes: [4001] });
  await waitFor(() => page.transport.status.state === 'closed', { what: 'the terminal close' });
  assert.deepEqual(page.told, [{ state: 'open' }, { state: 'closed', code: 4001, reason: 'unauthorized', terminal: true }]);
  assert.deepEqual(page.errors, [], 'it opened: no failed attempt');

  server.onConnection = undefined;
  const refused = watchedPage(server.url, { onOpen: () => Promise.reject(new Error('no token')) });
  await waitFor(() => refused.transport.status.state === 'closed', { what: 'the rejected onOpen' });
  assert.deepEqual(refused.told, [{ state: 'closed', reason: 'onOpen rejected', terminal: true }]);
  assert.deepEqual(refused.errors, [
    { code: 'transport_failed', message: 'transport: connection attempt 1 failed (onOpen rejected); not retrying' },
  ]);
});

test('onStatus: unsubscribing stops the calls, a throwing subscriber stops no other, bad callbacks are refused', async (ctx) => {
  const server = await agentServer();
  server.accept = false;
  const transport = websocketTransport({ url: server.url, WebSocket, maxDelayMs: 100 });
  cleanups.push(() => transport.close());
  assert.throws(() => transport.onStatus('nope'), { name: 'ToolmarkError', code: 'invalid_argument', message: 'websocketTransport: onStatus(callback) needs a function' });
  // Node has no reportError: a subscriber's throw goes to console.error.
  const logged = [];
  ctx.mock.method(console, 'error', (error) => logged.push(String(error?.message)));
  const seen = [];
  const off = transport.onStatus((s) => seen.push(s.state));
  transport.onStatus(() => {
    throw new Error('listener bug');
  });
  // Subscribed after the throwing one: it still hears every state.
  const later = [];
  transport.onStatus((s) => later.push(s.state));
  await waitFor(() => seen.length >= 1, { what: 'a state' });
  off();
  const count = seen.length;
  await waitFor(() => server.attempts.length >= 3, { what: 'more attempts' });
  assert.equal(seen.length, count);
  assert.deepEqual(later.slice(0, count), seen, 'the subscriber after the throwing one heard the same states');
  assert.ok(later.length > count, `the subscriber after the throwing one heard the later states: ${JSON.stringify(later)}`);
  assert.ok(logged.length >= 1 && logged.every((m) => m === 'listener bug'), JSON.stringify(logged));
});

/** What nonFunctionRefusals tells of a transport named `name`: each try refused. */
const refusals = (name) =>
  ['onMessage', 'onStatus'].flatMap((method) =>
    Array(3).fill(`${method}: ToolmarkError invalid_argument: ${name}: ${method}(callback) needs a function`),
  );

test('onMessage and onStatus of websocketTransport and postMessageTransport refuse a callback that is no function, also once closed; once closed they keep nothing', async () => {
  const target = { postMessage() {} };
  // A window as the transport uses it; Node's own events are a script's (isTrusted false).
  const listeners = new Set();
  const source = { addEventListener: (type, l) => listeners.add(l), removeEventListener: (type, l) => listeners.delete(l) };
  const origin = 'https://agent.example';
  const post = postMessageTransport({ target, targetOrigin: origin, allowedOrigins: [origin], source });
  const deliver = () => {
    const event = { type: 'message', data: { toolmark: 1, message: { n: 1 } }, origin, source: target };
    for (const listener of [...listeners]) listener(event);
  };
  const got = [];
  const off = post.onMessage((message) => got.push(message));
  deliver();
  off();
  deliver();
  assert.deepEqual(got, [{ n: 1 }], 'delivered while subscribed');
  assert.deepEqual(nonFunctionRefusals(post), refusals('postMessageTransport'));
  post.close();
  assert.deepEqual(nonFunctionRefusals(post), refusals('postMessageTransport'));
  const late = [];
  const offs = [post.onMessage((m) => late.push(m)), post.onStatus((s) => late.push(s))];
  deliver();
  for (const unsubscribe of offs) unsubscribe();
  assert.deepEqual(late, [], 'a closed transport keeps no subscriber');

  const server = await agentServer();
  const ws = websocketTransport({ url: server.url, WebSocket, maxDelayMs: 100 });
  cleanups.push(() => ws.close());
  assert.deepEqual(nonFunctionRefusals(ws), refusals('websocketTransport'));
  ws.close();
  assert.deepEqual(nonFunctionRefusals(ws), refusals('websocketTransport'));
  const wsOffs = [ws.onMessage((m) => late.push(m)), ws.onStatus((s) => late.push(s))];
  assert.deepEqual(wsOffs.map((f) => typeof f), ['function', 'function']);
  for (const unsubscribe of wsOffs) unsubscribe();
  assert.deepEqual(late, []);
});

/** An app's own transport with `status` (a property or getter of `own`); `tell` is its onStatus subscriber while subscribed. */
function appTransport(own) {
  const app = { tell: undefined };
  app.transport = Object.defineProperties(
    {
      send() {},
      onMessage: () => () => {},
      onStatus(callback) {
        app.tell = callback;
        return () => (app.tell = undefined);
      },
    },
    Object.getOwnPropertyDescriptors(own),
  );
  return app;
}

test("an app's own transport: its states are told, an unknown one is an error event", async () => {
  const { tm, errors } = greeterPage();
  const bridged = [];
  tm.events.on('status', (s) => bridged.push(s));
  const app = appTransport({ status: { state: 'connecting', attempt: 1 } });
  const detach = tm.use(bridge({ transport: app.transport }));
  const tell = (status) => app.tell(status);
  tell({ state: 'closed', code: 1011, reason: 'server error', terminal: false });
  tell({ state: 'sleeping' });
  assert.deepEqual(bridged, [{ state: 'connecting', attempt: 1 }, { state: 'closed', code: 1011, reason: 'server error', terminal: false }]);
  assert.deepEqual(errors, [
    { code: 'transport_failed', message: 'transport: connection attempt 1 failed (code 1011: server error); retrying' },
    { code: 'transport_failed', message: "bridge: the transport's status (transport.status or onStatus) is not connecting, open, reconnecting or closed" },
  ]);
  detach();
  assert.equal(app.tell, undefined, 'detaching unsubscribes');
  assert.throws(() => tm.events.on('statuses', () => {}), /unknown event 'statuses' \(known: 'error', 'status'\)/);
});

test("an app's transport whose status getter throws: an error event naming the read, and its onStatus states still told", () => {
  const { tm, errors } = greeterPage();
  const bridged = [];
  tm.events.on('status', (s) => bridged.push(s));
  const app = appTransport({
    get status() {
      throw new Error('not ready');
    },
  });
  const detach = tm.use(bridge({ transport: app.transport }));
  app.tell({ state: 'open' });
  assert.deepEqual(errors, [{ code: 'transport_failed', message: 'bridge: reading transport.status failed: Error: not ready' }]);
  assert.deepEqual(bridged, [{ state: 'open' }]);
  detach();
});

test('the in-page channel is open until closed', () => {
  const { transport } = createInPageChannel();
  const seen = [];
  transport.onStatus((s) => seen.push(s));
  assert.deepEqual(transport.status, { state: 'open' });
  transport.close();
  transport.close();
  assert.deepEqual(seen, [{ state: 'closed', reason: 'closed by close()', terminal: true }]);
  assert.deepEqual(transport.status, seen[0]);
});

test("the in-page channel's close() tells every onStatus subscriber: a throwing one is reported as uncaught, and the bridge detaching sees no failure", async () => {
  const out = await inOwnProcess(`
    const errors = [];
    const tm = createToolmark({ onError: (e) => errors.push(e.code + ': ' + e.message) });
    const { transport } = createInPageChannel();
    const told = [];
    transport.onStatus(() => { throw new Error('subscriber bug'); });
    transport.onStatus((status) => told.push(status.state));
    const detach = tm.use(bridge({ transport }));
    detach();
    await new Promise((resolve) => setImmediate(resolve));
    console.log(JSON.stringify({ told, errors, uncaught, state: transport.status.state }));
  `);
  assert.deepEqual(out, { told: ['closed'], errors: [], uncaught: ['subscriber bug'], state: 'closed' });
});

test('close() from the open state sends nothing that was buffered: a detached bridge announces nothing', async () => {
  const server = await agentServer();
  const transport = websocketTransport({ url: server.url, WebSocket });
  cleanups.push(() => transport.close());
  for (let n = 0; n < 3; n++) transport.send({ n }); // buffered while connecting
  transport.onStatus((status) => status.state === 'open' && transport.close());
  await waitFor(() => server.closes.length === 1, { what: 'the close' });
  assert.deepEqual([server.frames.map((f) => f.text), server.closes[0].code], [[], 1000]);

  // A bridge detached when its transport opens: its manifest was queued, not sent.
  const page = watchedPage(server.url);
  page.tm.events.on('status', (status) => status.state === 'open' && page.detach());
  await waitFor(() => server.closes.length === 2, { what: 'the second close' });
  assert.deepEqual([server.frames.map((f) => f.text), server.closes[1].code], [[], 1000]);
});
