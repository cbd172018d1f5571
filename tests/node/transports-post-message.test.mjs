// postMessageTransport in real headless Chromium with real iframes on two origins: two
// serve() servers on different ports of 127.0.0.1. Origin A hosts the page with the
// bridge, origin B the agent (and the other way round in the last round trip).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { launchChromium, serve } from './support/browser.mjs';
import { waitFor } from './support/ws-agent.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

// The agent end: records every message event, posts to its parent on request.
const AGENT = `<!doctype html><title>agent</title><script>
window.received = [];
addEventListener('message', (e) => received.push({ origin: e.origin, fromParent: e.source === parent, data: e.data }));
window.post = (data, origin) => parent.postMessage(data, origin);
</script>`;

// The page with a bridge inside an iframe (for the reversed orientation).
const CHILD_PAGE = `<!doctype html><title>child</title><script type="module">
const { createToolmark } = await import('/pkg/index.js');
const { bridge } = await import('/pkg/bridge/index.js');
const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
const parentOrigin = new URLSearchParams(location.search).get('parent');
const tm = createToolmark();
window.errors = [];
tm.events.on('error', (e) => errors.push(e));
tm.register({ name: 'where', description: 'Where the page runs', hints: { readOnly: true }, run: () => location.origin });
tm.use(bridge({ transport: postMessageTransport({ target: parent, targetOrigin: parentOrigin, allowedOrigins: [parentOrigin] }) }));
</script>`;

let a; // origin A
let b; // origin B
let browser;

before(async () => {
  const pages = { '/agent.html': AGENT, '/blank.html': '<!doctype html><title>blank</title>', '/child.html': CHILD_PAGE };
  a = await serve(root, pages);
  b = await serve(root, pages);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await a?.close();
  await b?.close();
});

/**
 * Origin A page with the bridge; iframes 'agent' and 'other' load B's agent page.
 * The transport's target is the 'agent' iframe. window.inbound records what the
 * transport hands to the bridge; window.runs every tool run.
 */
async function openBridgePage({ on = browser, agentOrigin = b.url } = {}) {
  const page = await on.newPage();
  await page.goto(`${a.url}/blank.html`);
  await page.evaluate(async (agentOrigin) => {
    const load = (name) =>
      new Promise((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = name;
        frame.src = `${agentOrigin}/agent.html`;
        frame.onload = () => resolve(frame);
        document.body.append(frame);
      });
    const agentFrame = await load('agent');
    await load('other');
    const { greeterPage } = await import('/tests/node/support/transport-page.mjs');
    const { bridge } = await import('/pkg/bridge/index.js');
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    window.runs = [];
    window.inbound = [];
    window.sent = [];
    // Every message event the page gets, after the transport's own listener has seen it.
    window.events = 0;
    window.agentFrame = agentFrame;
    const { tm, errors } = greeterPage({ greet: { onRun: (name) => window.runs.push(name) } });
    window.tm = tm;
    window.errors = errors;
    const transport = postMessageTransport({
      target: agentFrame.contentWindow,
      targetOrigin: agentOrigin,
      allowedOrigins: [agentOrigin],
    });
    const recording = {
      send: (m) => {
        window.sent.push(m);
        transport.send(m);
      },
      onMessage: (cb) => transport.onMessage((m) => {
        window.inbound.push(m);
        cb(m);
      }),
      close: () => transport.close(),
    };
    tm.use(bridge({ transport: recording }));
    addEventListener('message', () => window.events++);
  }, agentOrigin);
  return { page, agent: page.frame({ name: 'agent' }), other: page.frame({ name: 'other' }) };
}

const envelopes = (received, type) =>
  received.filter((r) => r.data && r.data.toolmark === 1 && r.data.message && (type === undefined || r.data.message.type === type));

async function receivedBy(frame, predicate, what) {
  return waitFor(async () => {
    const received = await frame.evaluate(() => window.received);
    return predicate(received) && received;
  }, { what });
}

const call = (clientId, name) => ({ protocol: 1, type: 'call', clientId, id: crypto.randomUUID(), tool: 'greet', input: { name } });

test('round trip between a page on origin A and an agent iframe on origin B', async () => {
  const { page, agent } = await openBridgePage();
  const received = await receivedBy(agent, (r) => envelopes(r, 'manifest').length > 0, 'manifest');
  const [manifest] = envelopes(received, 'manifest');
  assert.equal(manifest.origin, a.url);
  assert.equal(manifest.fromParent, true);
  assert.deepEqual(Object.keys(manifest.data), ['toolmark', 'message']);
  assert.deepEqual(manifest.data.message.tools.map((t) => t.name), ['greet']);

  const message = call(manifest.data.message.clientId, 'ada');
  await agent.evaluate(([data, origin]) => window.post(data, origin), [{ toolmark: 1, message }, a.url]);
  const after = await receivedBy(agent, (r) => envelopes(r, 'result').length > 0, 'result');
  assert.deepEqual(envelopes(after, 'result')[0].data, {
    toolmark: 1,
    message: { protocol: 1, type: 'result', clientId: message.clientId, id: message.id, result: { status: 'ok', data: 'hello ada' } },
  });
  assert.deepEqual(await page.evaluate(() => window.errors), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('an agent on a host with an underscore (a Docker Compose service) is reached by its one spelling', async () => {
  const port = new URL(b.url).port;
  const named = await launchChromium({ args: ['--host-resolver-rules=MAP agent_svc 127.0.0.1'] });
  try {
    const agentOrigin = `http://agent_svc:${port}`;
    const { page, agent } = await openBridgePage({ on: named, agentOrigin });
    const received = await receivedBy(agent, (r) => envelopes(r, 'manifest').length > 0, 'manifest');
    const message = call(envelopes(received, 'manifest')[0].data.message.clientId, 'svc');
    await agent.evaluate(([data, origin]) => window.post(data, origin), [{ toolmark: 1, message }, a.url]);
    await receivedBy(agent, (r) => envelopes(r, 'result').length > 0, 'result');
    assert.equal(await agent.evaluate(() => location.origin), agentOrigin);
    assert.deepEqual(await page.evaluate(() => window.runs), ['svc']);
    assert.deepEqual(await page.evaluate(() => window.errors), []);
  } finally {
    await named.close();
  }
});

test('another window, a missing envelope, a wrong origin and an event a script dispatched are ignored silently', async () => {
  const { page, agent, other } = await openBridgePage();
  const received = await receivedBy(agent, (r) => envelopes(r, 'manifest').length > 0, 'manifest');
  const clientId = envelopes(received, 'manifest')[0].data.message.clientId;

  // Right origin (B), valid envelope, but not the target window.
  const fromOther = call(clientId, 'other window');
  await other.evaluate(([data, origin]) => window.post(data, origin), [{ toolmark: 1, message: fromOther }, a.url]);
  // The target window, but no (or a wrong) envelope.
  const bare = call(clientId, 'bare');
  for (const data of [
    bare,
    { toolmark: 2, message: call(clientId, 'v2') },
    { toolmark: '1', message: call(clientId, 'string version') },
    { toolmark: 1 },
    { toolmark: 1, msg: call(clientId, 'misspelt') },
    JSON.stringify({ toolmark: 1, message: call(clientId, 'as text') }),
    null,
    [1, call(clientId, 'array')],
  ]) {
    await agent.evaluate(([value, origin]) => window.post(value, origin), [data, a.url]);
  }
  // A MessageEvent the page's own script made, naming the target window and origin B
  // (what a page's scripts can do to an extension's content script): not the browser's.
  const forged = call(clientId, 'forged');
  await page.evaluate(([message, origin]) => {
    const source = window.agentFrame.contentWindow;
    dispatchEvent(new MessageEvent('message', { source, origin, data: { toolmark: 1, message } }));
  }, [forged, b.url]);
  // A valid message last: everything before it has been dispatched by then.
  const good = call(clientId, 'good');
  await agent.evaluate(([data, origin]) => window.post(data, origin), [{ toolmark: 1, message: good }, a.url]);
  await receivedBy(agent, (r) => envelopes(r, 'result').length > 0, 'result');
  assert.deepEqual(await page.evaluate(() => window.runs), ['good']);
  assert.deepEqual(await page.evaluate(() => window.inbound.map((m) => m.id)), [good.id]);
  assert.deepEqual(await page.evaluate(() => window.errors), []); // never reached the bridge

  // The same target window navigated to another origin (A itself): ignored, and the
  // page's own messages (targetOrigin B) are no longer delivered to it.
  await agent.goto(`${a.url}/agent.html`);
  const wrongOrigin = call(clientId, 'wrong origin');
  const events = await page.evaluate(() => window.events);
  await agent.evaluate(([data, origin]) => window.post(data, origin), [{ toolmark: 1, message: wrongOrigin }, a.url]);
  // The transport's listener runs before the page's last one: once that one has the event, the
  // transport has passed it over.
  await waitFor(async () => (await page.evaluate(() => window.events)) > events, { what: 'the wrong-origin message' });
  await page.evaluate(() => window.tm.register({ name: 'later', description: 'A later tool', run: () => 1 })); // → manifest
  await waitFor(() => page.evaluate(() => window.sent.some((m) => m.type === 'manifest' && m.tools.some((t) => t.name === 'later'))), { what: 'manifest sent' });
  // Messages from one window to another arrive in order: a marker posted after the manifest,
  // to any origin, arrives alone if the manifest went nowhere.
  await page.evaluate(() => window.agentFrame.contentWindow.postMessage('marker', '*'));
  await receivedBy(agent, (r) => r.length > 0, 'marker');
  assert.deepEqual(await page.evaluate(() => window.runs), ['good']);
  assert.deepEqual(await page.evaluate(() => window.inbound.length), 1);
  assert.deepEqual((await agent.evaluate(() => window.received)).map((r) => r.data), ['marker']);
  assert.deepEqual(await page.evaluate(() => window.errors), []);
  await page.close();
});

test('reversed: the bridge in an iframe on origin B, the agent in the parent on origin A', async () => {
  const page = await browser.newPage();
  await page.goto(`${a.url}/agent.html`);
  // The parent page plays the agent: record message events from the child.
  await page.evaluate((src) => {
    window.fromChild = [];
    addEventListener('message', (e) => {
      const frame = document.querySelector('iframe');
      window.fromChild.push({ origin: e.origin, fromFrame: e.source === frame.contentWindow, data: e.data });
    });
    const frame = document.createElement('iframe');
    frame.src = src;
    document.body.append(frame);
  }, `${b.url}/child.html?parent=${encodeURIComponent(a.url)}`);
  const manifest = await waitFor(async () => {
    const list = await page.evaluate(() => window.fromChild);
    return list.find((m) => m.data?.message?.type === 'manifest');
  }, { what: 'manifest from the child' });
  assert.equal(manifest.origin, b.url);
  assert.equal(manifest.fromFrame, true);
  const message = { protocol: 1, type: 'call', clientId: manifest.data.message.clientId, id: crypto.randomUUID(), tool: 'where', input: {} };
  await page.evaluate(([data, origin]) => {
    const frame = document.querySelector('iframe');
    frame.contentWindow.postMessage(data, origin);
  }, [{ toolmark: 1, message }, b.url]);
  const result = await waitFor(async () => {
    const list = await page.evaluate(() => window.fromChild);
    return list.find((m) => m.data?.message?.type === 'result');
  }, { what: 'result from the child' });
  assert.deepEqual(result.data.message.result, { status: 'ok', data: b.url });
  const child = page.frames().find((f) => f.url().startsWith(`${b.url}/child.html`));
  assert.deepEqual(await child.evaluate(() => window.errors), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('construction rejects wildcard, null and non-origin values', async () => {
  const page = await browser.newPage();
  await page.goto(`${a.url}/blank.html`);
  const out = await page.evaluate(async (origin) => {
    const mod = await import('/pkg/bridge/post-message.js');
    const target = window; // any window
    const attempt = (targetOrigin, allowedOrigins, more = {}) => {
      try {
        mod.postMessageTransport({ target, targetOrigin, allowedOrigins, ...more }).close();
        return 'accepted';
      } catch (error) {
        return `${error.name}: ${error.message}`;
      }
    };
    return {
      exports: Object.keys(mod),
      star: attempt('*', [origin]),
      slash: attempt('/', [origin]),
      trailing: attempt(`${origin}/`, [origin]),
      path: attempt(`${origin}/page.html`, [origin]),
      url: attempt(new URL(origin), [origin]),
      allowedStar: attempt(origin, ['*']),
      allowedNull: attempt(origin, ['null']),
      allowedTrailing: attempt(origin, [`${origin}/`]),
      allowedEmpty: attempt(origin, []),
      allowedMissing: attempt(origin, undefined),
      allowedNotArray: attempt(origin, origin),
      noTarget: attempt(origin, [origin], { target: { postMessage: 'no' } }),
      nullSource: attempt(origin, [origin], { source: null }),
      sourceWithoutRemove: attempt(origin, [origin], { source: { addEventListener() {} } }),
      ok: attempt(origin, [origin, 'https://example.com', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop']),
      okWithSource: attempt(origin, [origin], { source: new EventTarget() }),
    };
  }, a.url);
  assert.deepEqual(out.exports, ['postMessageTransport']);
  assert.match(out.star, /^ToolmarkError: .*'\*'/);
  for (const key of ['slash', 'trailing', 'path', 'allowedStar', 'allowedNull', 'allowedTrailing', 'allowedEmpty', 'allowedMissing']) {
    assert.match(out[key], /^ToolmarkError: /, key);
  }
  assert.equal(out.ok, 'accepted');
  // A URL is read as its text, whose path the refusal names.
  assert.equal(out.url, `${out.trailing}`);
  // The option rules are the core's, on the options' JS types.
  assert.equal(out.allowedNotArray, 'ToolmarkError: postMessageTransport: allowedOrigins must be a non-empty array of origins');
  assert.equal(out.noTarget, 'ToolmarkError: postMessageTransport: target must have postMessage (a window)');
  assert.match(out.nullSource, /^ToolmarkError: postMessageTransport: source /);
  assert.equal(out.sourceWithoutRemove, out.nullSource);
  assert.equal(out.okWithSource, 'accepted');
  await page.close();
});
