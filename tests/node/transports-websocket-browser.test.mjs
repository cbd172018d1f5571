// websocketTransport (the Rust driver, src/wasm/websocket.rs) in real headless Chromium,
// over the browser's own WebSocket, against a real `ws` server started here: a call
// answered over the socket, a server killed and restarted mid-call (the buffered result
// arrives once), frames the transport drops, terminal and non-terminal close codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';
import { startWsAgent, waitFor } from './support/ws-agent.mjs';

const MAX_FRAME = 4 * 1048576;
const chromium = chromiumWithServer();

/**
 * A page with a registry (tools `greet` and `slow`, whose run waits for
 * `window.release()`) attached over websocketTransport to `url`. The page
 * records tool runs, error events and every JSON.parse of an inbound call.
 */
async function openPage(url, options = {}) {
  const page = await chromium.open();
  await page.evaluate(
    async ({ url, options }) => {
      const { greeterPage } = await import('/tests/node/support/transport-page.mjs');
      const { bridge } = await import('/pkg/bridge/index.js');
      const { websocketTransport } = await import('/pkg/bridge/websocket.js');
      window.runs = [];
      const { tm, errors } = greeterPage({
        greet: { asObject: true, onRun: (name) => window.runs.push(name) },
        recordError: (e) => e.code,
      });
      window.errors = errors;
      tm.register({
        name: 'slow',
        description: 'Answers when released',
        hints: { readOnly: true },
        run: () => {
          window.runs.push('slow');
          return new Promise((resolve) => (window.release = () => resolve({ text: 'done' })));
        },
      });
      window.transport = websocketTransport({ url, ...options });
      window.told = [];
      window.transport.onStatus((status) => window.told.push(status));
      window.bridged = [];
      tm.events.on('status', (status) => window.bridged.push(status));
      window.detach = tm.use(bridge({ transport: window.transport }));
    },
    { url, options },
  );
  return page;
}

const call = (clientId, tool, input) => ({ protocol: 1, type: 'call', clientId, id: crypto.randomUUID(), tool, input });

/** Runs `body(agent, page)` with a new `ws` agent and a page attached to it, closing both after. */
async function withAgentPage(options, body) {
  const agent = await startWsAgent();
  const page = await openPage(agent.url, options);
  try {
    await body(agent, page);
  } finally {
    await page.close();
    await agent.close();
  }
}

async function manifestOf(agent) {
  const [manifest] = await waitFor(() => agent.messages('manifest').length && agent.messages('manifest'), { what: 'manifest' });
  return manifest;
}

/** The results the agent has got, once there is one. */
const resultsOf = (agent, wait = {}) =>
  waitFor(() => agent.messages('result').length && agent.messages('result'), { what: 'result', ...wait });

test('the page answers a call over the socket', () =>
  withAgentPage({}, async (agent, page) => {
    const manifest = await manifestOf(agent);
    assert.deepEqual(manifest.tools.map((t) => t.name), ['greet', 'slow']);
    const message = call(manifest.clientId, 'greet', { name: 'ada' });
    agent.latest().send(JSON.stringify(message));
    const [result] = await resultsOf(agent);
    assert.deepEqual(result, {
      protocol: 1, type: 'result', clientId: manifest.clientId, id: message.id, result: { status: 'ok', data: { text: 'hello ada' } },
    });
    const state = await page.evaluate(() => ({ runs: window.runs, errors: window.errors }));
    assert.deepEqual(state, { runs: ['ada'], errors: [] });
    assert.deepEqual(page.errors, []);
  }));

test('the server is killed and restarted mid-call: the buffered result arrives exactly once', async () => {
  let agent = await startWsAgent();
  const { port } = agent;
  const page = await openPage(agent.url, { maxDelayMs: 300 });
  try {
    const manifest = await manifestOf(agent);
    const message = call(manifest.clientId, 'slow', {});
    agent.latest().send(JSON.stringify(message));
    await waitFor(() => page.evaluate(() => typeof window.release === 'function'), { what: 'slow run started' });
    await agent.close(); // killed: sockets terminated, nothing listens on the port
    const old = agent;
    const told = async () => page.evaluate(() => window.told);
    await waitFor(async () => (await told()).some((s) => s.state === 'reconnecting'), { what: 'the page saw the close' });
    await page.evaluate(() => window.release()); // the result is buffered while disconnected
    // At least one reconnect refused: the second attempt is scheduled.
    await waitFor(async () => (await told()).some((s) => s.state === 'reconnecting' && s.attempt >= 2), { what: 'a refused reconnect' });
    agent = await startWsAgent({ port });
    const [result] = await resultsOf(agent, { timeoutMs: 5000, what: 'buffered result' });
    assert.equal(result.id, message.id);
    assert.deepEqual(result.result, { status: 'ok', data: { text: 'done' } });
    assert.equal(old.messages('result').length, 0);
    // The conversation goes on over the new socket; the same call id is not run again, and
    // the next result is the next message (frames keep their order: no second copy came first).
    agent.latest().send(JSON.stringify(message));
    const next = call(manifest.clientId, 'greet', { name: 'grace' });
    agent.latest().send(JSON.stringify(next));
    await waitFor(() => agent.messages('result').length === 2, { what: 'next result' });
    assert.equal(agent.messages('result')[1].id, next.id);
    assert.deepEqual(await page.evaluate(() => window.runs), ['slow', 'grace']);
    assert.deepEqual(page.errors, []);
  } finally {
    await page.close();
    await agent.close();
  }
});

test('binary, oversized and non-JSON frames are dropped: no run, no answer, no error', () =>
  withAgentPage({}, async (agent, page) => {
    const manifest = await manifestOf(agent);
    const socket = agent.latest();
    const binary = call(manifest.clientId, 'greet', { name: 'binary' });
    socket.send(Buffer.from(JSON.stringify(binary)), { binary: true });
    const big = call(manifest.clientId, 'greet', { name: 'big' });
    const text = JSON.stringify(big);
    const oversized = `${text.slice(0, -1)}${' '.repeat(MAX_FRAME + 1 - text.length)}}`;
    assert.equal(oversized.length, MAX_FRAME + 1);
    socket.send(oversized);
    socket.send('{"protocol":1,"type":"call", not json');
    socket.send('hello');
    const good = call(manifest.clientId, 'greet', { name: 'good' });
    socket.send(JSON.stringify(good));
    // The dropped frames came first on the socket, and frames are read in order: by the good
    // one's result, they have been read.
    const [result] = await resultsOf(agent, { timeoutMs: 10000 });
    assert.equal(result.id, good.id);
    assert.equal(agent.messages('result').length, 1);
    const state = await page.evaluate(() => ({ runs: window.runs, errors: window.errors }));
    assert.deepEqual(state, { runs: ['good'], errors: [] });
    assert.deepEqual(page.errors, []);
  }));

test('a terminal close code stops reconnecting; a non-terminal one reconnects', () =>
  withAgentPage({ maxDelayMs: 300, terminalCloseCodes: [4001] }, async (agent, page) => {
    await manifestOf(agent);
    agent.latest().close(4000, 'retry');
    await waitFor(() => agent.sockets.length === 2, { timeoutMs: 3000, what: 'reconnect after 4000' });
    agent.latest().close(4001, 'unauthorized');
    await waitFor(async () => (await page.evaluate(() => window.told)).some((s) => s.state === 'closed' && s.terminal), { what: 'terminal close' });
    assert.equal(agent.attempts.length, 2);
    const sendError = await page.evaluate(() => {
      try {
        window.transport.send({ x: 1 });
        return null;
      } catch (error) {
        return error.message;
      }
    });
    assert.equal(sendError, 'websocketTransport: closed, not reconnecting');
    const stats = await page.evaluate(() => Object.getPrototypeOf(window.transport).constructor.__stats());
    assert.equal(stats.transports, 0);
    assert.deepEqual(page.errors, []);
  }));

test('connection state: a server that refuses, comes back, drops and returns is told state by state', async () => {
  const agent = await startWsAgent();
  agent.accept = false;
  const page = await openPage(agent.url, { maxDelayMs: 100 });
  const told = () => page.evaluate(() => window.told);
  const closed = { state: 'closed', code: 1006, reason: '', terminal: false };
  try {
    await waitFor(async () => (await told()).length >= 3, { what: 'a failed attempt' });
    assert.deepEqual((await told()).slice(0, 3), [closed, { state: 'reconnecting', attempt: 2, delayMs: 100 }, { state: 'connecting', attempt: 2 }]);
    const errors = await page.evaluate(() => window.errors);
    assert.equal(errors[0], 'transport_failed');
    agent.accept = true;
    await manifestOf(agent);
    await waitFor(async () => (await told()).at(-1).state === 'open', { what: 'open' });
    const before = (await told()).length;
    agent.latest().terminate();
    await waitFor(async () => (await told()).length >= before + 4, { what: 'the reconnect' });
    assert.deepEqual((await told()).slice(before, before + 4), [
      closed,
      { state: 'reconnecting', attempt: 1, delayMs: 100 },
      { state: 'connecting', attempt: 1 },
      { state: 'open' },
    ]);
    const { bridged, all, status } = await page.evaluate(() => ({ bridged: window.bridged, all: window.told, status: window.transport.status }));
    assert.deepEqual(bridged, [{ state: 'connecting', attempt: 1 }, ...all]);
    assert.deepEqual(status, { state: 'open' });
    assert.ok((await page.evaluate(() => window.errors)).every((code) => code === 'transport_failed'));
  } finally {
    await page.close();
    await agent.close();
  }
});

// Frames held while onOpen is pending are bounded in bytes (4 MiB of UTF-8
// per connection, oldest evicted; a longer frame alone is dropped without
// being copied into wasm memory): 50 frames at the frame limit ('é', 8 MiB
// of UTF-8 each) and 10 of 1 MB leave the module's memory within a few
// frames of where it was.
test('frames held while onOpen is pending are bounded in bytes: wasm memory stays bounded, the newest are delivered in order', { timeout: 120000 }, async () => {
  const agent = await startWsAgent();
  const page = await chromium.open();
  try {
    await page.evaluate(async (url) => {
      const { websocketTransport } = await import('/pkg/bridge/websocket.js');
      window.handled = 0;
      window.received = [];
      const gate = new Promise((resolve) => (window.release = resolve));
      // Counted by a listener added after the transport's: when it runs,
      // the transport has handled the frame.
      window.transport = websocketTransport({
        url,
        onOpen: (ws) => {
          ws.addEventListener('message', () => window.handled++);
          return gate;
        },
      });
      window.transport.onMessage((m) => window.received.push(m.i));
      window.stats = () => Object.getPrototypeOf(window.transport).constructor.__stats();
    }, agent.url);
    await waitFor(() => agent.sockets.length === 1, { what: 'connection' });
    const handled = (n) => waitFor(async () => (await page.evaluate(() => window.handled)) === n, { timeoutMs: 60000, what: `${n} frames` });
    const stats = () => page.evaluate(() => window.stats());
    const socket = agent.latest();
    const atLimit = JSON.stringify({ pad: 'é'.repeat(MAX_FRAME - 10) });
    assert.equal(atLimit.length, MAX_FRAME);
    const small = (i) => JSON.stringify({ i, pad: 'x'.repeat(1_000_000 - 20) });
    const start = await stats();
    socket.send(atLimit);
    await handled(1);
    for (let i = 0; i < 50; i++) socket.send(atLimit);
    for (let i = 0; i < 10; i++) socket.send(small(i));
    await handled(61);
    const after = await stats();
    const grew = after.memoryBytes - start.memoryBytes;
    assert.ok(grew <= 8 * 1048576, `wasm memory grew by ${grew} bytes for 61 frames held while onOpen was pending`);
    assert.equal(after.heldDropped - start.heldDropped, 57);
    assert.deepEqual(await page.evaluate(() => window.received), []);
    await page.evaluate(() => window.release());
    await waitFor(async () => (await page.evaluate(() => window.received.length)) === 4, { what: 'the held frames' });
    // A frame after them comes after them: nothing else was held.
    socket.send(JSON.stringify({ i: 'after' }));
    await waitFor(async () => (await page.evaluate(() => window.received.length)) === 5, { what: 'the frame after' });
    assert.deepEqual(await page.evaluate(() => window.received), [6, 7, 8, 9, 'after']);
    assert.deepEqual(page.errors, []);
  } finally {
    await page.close();
    await agent.close();
  }
});
