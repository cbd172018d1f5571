// postMessageTransport (src/wasm/post_message.rs) in real headless Chromium, with a real
// counterpart at both ends: the page with the registry and the bridge on origin A
// (http://127.0.0.1:PORT_A), the agent in an iframe on origin B (http://localhost:PORT_B)
// over its own postMessageTransport, a second origin-B iframe that is not the target, and
// an attacker iframe on origin C (http://127.0.0.1:PORT_C) that knows the clientId and
// posts well-formed calls and forged results.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { launchChromium, serve } from './support/browser.mjs';
import { waitFor } from './support/ws-agent.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

// The agent end: a postMessageTransport to its parent (origin in ?parent=); every
// message it hands on is kept in window.messages, every raw message event in window.raw.
const AGENT = `<!doctype html><title>agent</title><script type="module">
window.raw = [];
addEventListener('message', (e) => raw.push({ origin: e.origin, data: e.data }));
const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
const parentOrigin = new URLSearchParams(location.search).get('parent');
window.messages = [];
window.transport = postMessageTransport({ target: parent, targetOrigin: parentOrigin, allowedOrigins: [parentOrigin] });
transport.onMessage((m) => messages.push(m));
window.ready = true;
</script>`;

// A frame that is not the transport's target: records what it is sent, posts what it is told.
const STRANGER = `<!doctype html><title>stranger</title><script>
window.raw = [];
addEventListener('message', (e) => raw.push({ origin: e.origin, data: e.data }));
window.toParent = (data, origin) => parent.postMessage(data, origin);
window.toSibling = (index, data, origin) => parent.frames[index].postMessage(data, origin);
window.ready = true;
</script>`;

let a; // the page's origin
let b; // the agent's origin (served as localhost)
let c; // the attacker's origin
let browser;

before(async () => {
  const pages = { '/agent.html': AGENT, '/stranger.html': STRANGER, '/blank.html': '<!doctype html><title>blank</title>' };
  [a, b, c] = await Promise.all([serve(root, pages), serve(root, pages), serve(root, pages)]);
  b.url = b.url.replace('127.0.0.1', 'localhost');
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

/** Origin A's page with iframes, in order: the agent (B), a stranger on B, the attacker (C). */
async function openFrames() {
  const page = await browser.newPage();
  await page.goto(`${a.url}/blank.html`);
  await page.evaluate(async (sources) => {
    for (const [name, src] of sources) {
      await new Promise((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = name;
        frame.src = src;
        frame.onload = resolve;
        document.body.append(frame);
      });
    }
  }, [
    ['agent', `${b.url}/agent.html?parent=${encodeURIComponent(a.url)}`],
    ['other', `${b.url}/stranger.html`],
    ['attacker', `${c.url}/stranger.html`],
  ]);
  const frames = { page, agent: page.frame({ name: 'agent' }), other: page.frame({ name: 'other' }), attacker: page.frame({ name: 'attacker' }) };
  for (const name of ['agent', 'other', 'attacker']) await frames[name].waitForFunction(() => window.ready === true);
  return frames;
}

/** The registry and the bridge in origin A's page, over postMessageTransport to the agent frame. */
async function attachBridge(page) {
  await page.evaluate(async (agentOrigin) => {
    const { greeterPage } = await import('/tests/node/support/transport-page.mjs');
    const { bridge } = await import('/pkg/bridge/index.js');
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    window.runs = [];
    window.seen = []; // the id of every call message the window gets, whoever listens
    addEventListener('message', (e) => window.seen.push(e.data?.message?.id ?? e.data?.id));
    const { tm, errors } = greeterPage({ greet: { onRun: (name) => window.runs.push(name) }, recordError: (e) => e.code });
    window.errors = errors;
    window.tm = tm;
    const target = document.querySelector('iframe[name=agent]').contentWindow;
    window.detach = tm.use(bridge({ transport: postMessageTransport({ target, targetOrigin: agentOrigin, allowedOrigins: [agentOrigin] }) }));
  }, b.url);
}

const call = (clientId, name) => ({ protocol: 1, type: 'call', clientId, id: crypto.randomUUID(), tool: 'greet', input: { name } });
const agentMessages = (agent, type) => agent.evaluate((type) => window.messages.filter((m) => m.type === type), type);

async function resultFor(agent, id) {
  return waitFor(async () => (await agentMessages(agent, 'result')).find((m) => m.id === id), { what: `result ${id}` });
}

test('a call round trip between origin A and origin B; origin C and another B window get no run and no answer', async () => {
  const { page, agent, other, attacker } = await openFrames();
  await attachBridge(page);
  const [manifest] = await waitFor(() => agentMessages(agent, 'manifest').then((list) => list.length && list), { what: 'manifest' });
  assert.deepEqual(manifest.tools.map((t) => t.name), ['greet']);
  const { clientId } = manifest;

  // The agent's transport posts the envelope to the page with targetOrigin A.
  const first = call(clientId, 'ada');
  await agent.evaluate((m) => window.transport.send(m), first);
  assert.deepEqual(await resultFor(agent, first.id), {
    protocol: 1, type: 'result', clientId, id: first.id, result: { status: 'ok', data: 'hello ada' },
  });
  // On the wire: the envelope, from origin A.
  const wire = await agent.evaluate(() => window.raw.find((r) => r.data?.message?.type === 'result'));
  assert.equal(wire.origin, a.url);
  assert.deepEqual(Object.keys(wire.data), ['toolmark', 'message']);

  // Origin C knows the clientId and posts well-formed calls, with '*' and with origin A.
  const forged = [call(clientId, 'attacker star'), call(clientId, 'attacker exact')];
  await attacker.evaluate(([m1, m2, origin]) => {
    window.toParent({ toolmark: 1, message: m1 }, '*');
    window.toParent({ toolmark: 1, message: m2 }, origin);
    window.toParent(m1, '*'); // no envelope either
  }, [...forged, a.url]);
  // It forges a result to the agent, as if from the page.
  const forgedResult = { protocol: 1, type: 'result', clientId, id: crypto.randomUUID(), result: { status: 'ok', data: 'forged' } };
  await attacker.evaluate((m) => window.toSibling(0, { toolmark: 1, message: m }, '*'), forgedResult);
  // Origin B, the agent's own origin, but another window.
  const sibling = call(clientId, 'same origin, other window');
  await other.evaluate(([m, origin]) => window.toParent({ toolmark: 1, message: m }, origin), [sibling, a.url]);

  // A good call last: the page handles messages in order, so the others came before it.
  const last = call(clientId, 'last');
  await agent.evaluate((m) => window.transport.send(m), last);
  await resultFor(agent, last.id);
  assert.deepEqual(await page.evaluate(() => window.runs), ['ada', 'last']);
  assert.deepEqual((await agentMessages(agent, 'result')).map((m) => m.id), [first.id, last.id]);
  // The forged result reached the agent's window, and its transport dropped it.
  assert.ok(await agent.evaluate((id) => window.raw.some((r) => r.data?.message?.id === id), forgedResult.id));
  assert.deepEqual(await attacker.evaluate(() => window.raw), []);
  assert.deepEqual(await other.evaluate(() => window.raw), []);
  assert.deepEqual(await page.evaluate(() => window.errors), [], 'nothing foreign reached the bridge');

  // The target window itself, navigated to origin C: its calls are dropped, and the
  // page's messages (targetOrigin B) are not delivered to it.
  await page.evaluate((src) => new Promise((resolve) => {
    const frame = document.querySelector('iframe[name=agent]');
    frame.onload = resolve;
    frame.src = src;
  }), `${c.url}/stranger.html`);
  const navigatedFrame = page.frames().find((f) => f.url() === `${c.url}/stranger.html` && f.name() === 'agent');
  await navigatedFrame.waitForFunction(() => window.ready === true);
  const navigated = call(clientId, 'navigated');
  await navigatedFrame.evaluate(([m, origin]) => window.toParent({ toolmark: 1, message: m }, origin), [navigated, a.url]);
  await waitFor(() => page.evaluate((id) => window.seen.includes(id), navigated.id), { what: 'the navigated frame\'s call' });
  await page.evaluate(() => window.tm.register({ name: 'later', description: 'A later tool', run: () => 1 }));
  await page.waitForTimeout(200);
  assert.deepEqual(await page.evaluate(() => window.runs), ['ada', 'last']);
  assert.deepEqual(await navigatedFrame.evaluate(() => window.raw), []);
  assert.deepEqual(await page.evaluate(() => window.errors), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("construction refuses '*', 'null' and origins that are not serialized, with a ToolmarkError invalid_argument", async () => {
  const { page } = await openFrames();
  const out = await page.evaluate(async ([pageOrigin, agentOrigin]) => {
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    const target = document.querySelector('iframe[name=agent]').contentWindow;
    const attempt = (targetOrigin, allowedOrigins, extra = {}) => {
      try {
        postMessageTransport({ target, targetOrigin, allowedOrigins, ...extra }).close();
        return 'accepted';
      } catch (error) {
        return `${error.constructor.name}: ${error.message}`;
      }
    };
    const port = new URL(agentOrigin).port;
    return {
      targetStar: attempt('*', [agentOrigin]),
      targetNull: attempt('null', [agentOrigin]),
      refusedTargets: [`${agentOrigin}/`, `${agentOrigin}/agent.html`, `localhost:${port}`, `HTTP://LOCALHOST:${port}`,
        'http://localhost:80', `http://user@localhost:${port}`, `${agentOrigin}?x`, '', undefined, 42].map((o) => attempt(o, [agentOrigin])),
      allowedStar: attempt(agentOrigin, ['*']),
      allowedNull: attempt(agentOrigin, [agentOrigin, 'null']),
      refusedAllowed: [[`${agentOrigin}/`], [], 'http://a.example', undefined, [pageOrigin, 7]].map((list) => attempt(agentOrigin, list)),
      noTarget: attempt(agentOrigin, [agentOrigin], { target: {} }),
      noSource: attempt(agentOrigin, [agentOrigin], { source: {} }),
      accepted: attempt(agentOrigin, [agentOrigin, pageOrigin, 'https://[::1]:8443', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop']),
    };
  }, [a.url, b.url]);
  assert.match(out.targetStar, /^ToolmarkError: postMessageTransport: targetOrigin '\*' is not allowed/);
  assert.match(out.targetNull, /^ToolmarkError: postMessageTransport: targetOrigin must be a serialized origin/);
  for (const refused of out.refusedTargets) assert.match(refused, /^ToolmarkError: postMessageTransport: targetOrigin must be a serialized origin/);
  assert.match(out.allowedStar, /^ToolmarkError: postMessageTransport: "\*" is not allowed in allowedOrigins/);
  assert.match(out.allowedNull, /^ToolmarkError: postMessageTransport: "null" is not allowed in allowedOrigins/);
  for (const refused of out.refusedAllowed) assert.match(refused, /^ToolmarkError: postMessageTransport: allowedOrigins /);
  assert.match(out.noTarget, /^ToolmarkError: postMessageTransport: target must have postMessage/);
  assert.match(out.noSource, /^ToolmarkError: postMessageTransport: source must be an event target/);
  assert.equal(out.accepted, 'accepted');
  await page.close();
});

test('close() removes the listeners: a message after it does nothing, and send throws', async () => {
  const { page, agent } = await openFrames();
  await page.evaluate((agentOrigin) => {
    window.seen = []; // every envelope the page's window gets, whoever listens
    addEventListener('message', (e) => window.seen.push(e.data?.message?.n));
  }, b.url);
  const state = () => page.evaluate(() => ({ seen: window.seen, got: window.got, listening: window.listening }));
  await page.evaluate(async (agentOrigin) => {
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    window.listening = 0;
    // The window as the source, counting what is attached: removing a listener other
    // than the one added would leave the count above zero and the listener in place.
    const attached = new Set();
    const source = {
      addEventListener(type, listener) {
        attached.add(listener);
        window.listening = attached.size;
        window.addEventListener(type, listener);
      },
      removeEventListener(type, listener) {
        attached.delete(listener);
        window.listening = attached.size;
        window.removeEventListener(type, listener);
      },
    };
    const target = document.querySelector('iframe[name=agent]').contentWindow;
    window.pm = postMessageTransport({ target, targetOrigin: agentOrigin, allowedOrigins: [agentOrigin], source });
    window.got = [];
    pm.onMessage((m) => window.got.push(['first', m.n]));
    window.offSecond = pm.onMessage((m) => window.got.push(['second', m.n]));
  }, b.url);
  const post = (n) => agent.evaluate((n) => window.transport.send({ n }), n);
  await post(1);
  await waitFor(async () => (await state()).seen.includes(1), { what: 'message 1' });
  assert.deepEqual(await state(), { seen: [1], got: [['first', 1], ['second', 1]], listening: 2 });

  await page.evaluate(() => window.offSecond());
  await post(2);
  await waitFor(async () => (await state()).seen.includes(2), { what: 'message 2' });
  assert.deepEqual(await state(), { seen: [1, 2], got: [['first', 1], ['second', 1], ['first', 2]], listening: 1 });

  await page.evaluate(() => window.pm.close());
  assert.equal((await state()).listening, 0);
  await post(3);
  await waitFor(async () => (await state()).seen.includes(3), { what: 'message 3' });
  const after = await page.evaluate(() => {
    let sent;
    try {
      window.pm.send({ n: 4 });
      sent = 'sent';
    } catch (error) {
      sent = `${error.constructor.name}: ${error.message}`;
    }
    const off = window.pm.onMessage(() => window.got.push(['late']));
    off();
    return { got: window.got, listening: window.listening, sent };
  });
  assert.deepEqual(after, { got: [['first', 1], ['second', 1], ['first', 2]], listening: 0, sent: 'ToolmarkError: postMessageTransport: closed' });
  assert.deepEqual(await agent.evaluate(() => window.raw.filter((r) => r.data?.message?.n === 4)), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('connection state: open until the target frame goes away, then closed for good, found on a send or by the watch', async () => {
  const { page } = await openFrames();
  await page.evaluate(async (agentOrigin) => {
    const { greeterPage } = await import('/tests/node/support/transport-page.mjs');
    const { bridge } = await import('/pkg/bridge/index.js');
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    const { tm, errors } = greeterPage({ recordError: (e) => e.message });
    Object.assign(window, { tm, errors, told: [], bridged: [], watched: [] });
    tm.events.on('status', (s) => window.bridged.push(s));
    const target = document.querySelector('iframe[name=agent]').contentWindow;
    window.pm = postMessageTransport({ target, targetOrigin: agentOrigin, allowedOrigins: [agentOrigin] });
    tm.use(bridge({ transport: window.pm }));
    // A second transport to the other frame, watched but never sending.
    const other = document.querySelector('iframe[name=other]').contentWindow;
    window.watchedPm = postMessageTransport({ target: other, targetOrigin: agentOrigin, allowedOrigins: [agentOrigin] });
    window.watchedPm.onStatus((s) => window.watched.push(s));
  }, b.url);
  assert.deepEqual(await page.evaluate(() => [window.pm.status, window.bridged]), [{ state: 'open' }, [{ state: 'open' }]]);
  const gone = { state: 'closed', reason: 'the target window closed', terminal: true };

  // The agent's frame is removed; the next manifest finds its window closed.
  const after = await page.evaluate(() => {
    document.querySelector('iframe[name=agent]').remove();
    window.tm.register({ name: 'late', description: 'Registered after the agent left', run: () => 1 });
    let sendError;
    try {
      window.pm.send({ x: 1 });
    } catch (error) {
      sendError = error.message;
    }
    return { status: window.pm.status, bridged: window.bridged, errors: window.errors, sendError };
  });
  assert.deepEqual(after.status, gone);
  assert.deepEqual(after.bridged, [{ state: 'open' }, gone]);
  assert.equal(after.sendError, 'postMessageTransport: the target window closed');
  assert.deepEqual(after.errors, ['transport.send failed: ToolmarkError: postMessageTransport: the target window closed']);

  // The watched transport finds its removed frame without sending (checked every second).
  await page.evaluate(() => document.querySelector('iframe[name=other]').remove());
  await waitFor(() => page.evaluate(() => window.watched.length === 1), { timeoutMs: 5000, what: 'the watch' });
  assert.deepEqual(await page.evaluate(() => [window.watched, window.watchedPm.status]), [[gone], gone]);
  await page.close();
});
