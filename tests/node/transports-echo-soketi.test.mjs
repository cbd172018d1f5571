// echoTransport against a real soketi (started here on free ports, stopped at the end), with
// the real laravel-echo and pusher-js clients, in Node and in headless Chromium. The
// Laravel-like backend (tests/node/support/echo-backend.mjs) signs private-channel auth with
// soketi's app secret, authorizing per user and conversation, and records the bridge's
// POSTs; the agent publishes its calls through soketi's HTTP events API, as Laravel's
// broadcaster does.
import { test, describe, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import Echo from 'laravel-echo';
import Pusher from 'pusher-js';
import { startSoketi } from './support/soketi.mjs';
import { ECHO_APP_PAGE, openEchoApp, startEchoBackend } from './support/echo-backend.mjs';
import { REPO_ROOT, launchChromium } from './support/browser.mjs';
import { waitFor, sleep } from './support/ws-agent.mjs';
import { greeterPage, pusherEchoOptions } from './support/transport-page.mjs';

const { newId } = await import(new URL('../../pkg/index.js', import.meta.url));
const { bridge } = await import(new URL('../../pkg/bridge/index.js', import.meta.url));
const { echoTransport } = await import(new URL('../../pkg/bridge/echo.js', import.meta.url));

const EVENT = 'toolmark.message'; // Laravel's broadcastAs(); Echo listens to '.toolmark.message'
// Conversations and their owners; users by bearer token (Node) or session cookie (Chromium).
const OWNER = { 42: '7', 43: '8' };
const TOKENS = { 'token-7': '7', 'token-8': '8' };
const SESSIONS = { 'sess-7': '7', 'sess-8': '8' };

/** The user a request comes from. */
function userOf({ headers, cookies }) {
  const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  return bearer !== undefined ? TOKENS[bearer] : SESSIONS[cookies.laravel_session];
}

/** routes/channels.php: `toolmark.{user}.{conversation}`, for that user's own conversation. */
function authorize(request) {
  const match = /^private-toolmark\.(\d+)\.(\d+)$/.exec(request.channel);
  const user = userOf(request);
  return !!match && user !== undefined && match[1] === user && OWNER[match[2]] === user;
}

let soketi;
let backend;

before(async () => {
  soketi = await startSoketi();
  backend = await startEchoBackend({
    root: REPO_ROOT,
    key: soketi.key,
    secret: soketi.secret,
    authorize,
    pages: {
      '/app-7.html': { html: ECHO_APP_PAGE, cookies: ['laravel_session=sess-7; Path=/; HttpOnly; SameSite=Lax'] },
      '/app-8.html': { html: ECHO_APP_PAGE, cookies: ['laravel_session=sess-8; Path=/; HttpOnly; SameSite=Lax'] },
    },
  });
});

after(async () => {
  await backend?.close();
  await soketi?.close();
});

afterEach(() => {
  backend.postStatus = 200;
});

const call = (clientId, name) => ({ protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input: { name } });
const postsSince = (start, type) => backend.posts.slice(start).filter((p) => p.json?.type === type);
const occupied = async (channel) => (await soketi.channel(channel)).subscription_count ?? 0;
const authsSince = (start, channel) => backend.authRequests.slice(start).filter((r) => r.channel === channel);

test('soketi is the counterpart: its HTTP API answers signed requests and refuses an unsigned publish', async () => {
  assert.deepEqual(await soketi.channel('private-toolmark.7.42'), { occupied: false, subscription_count: 0 });
  const unsigned = await fetch(`${soketi.url}/apps/${soketi.appId}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: EVENT, channels: ['private-toolmark.7.42'], data: '{}' }),
  });
  assert.equal((await unsigned.json()).code, 401);
});

describe('in Node (pusher-js Node build)', () => {
  const cleanups = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function newEcho(token) {
    const echo = new Echo({
      ...pusherEchoOptions({ key: soketi.key, wsHost: soketi.host, wsPort: soketi.port }),
      Pusher,
      authEndpoint: `${backend.url}/broadcasting/auth`,
      // Not `bearerToken`: laravel-echo writes that into an `auth` object its instances
      // share, so a second instance would send the first one's token.
      auth: { headers: { Authorization: `Bearer ${token}` } },
    });
    cleanups.push(() => echo.disconnect());
    return echo;
  }

  function page(echo, channel) {
    const { tm, errors } = greeterPage();
    let xsrf = 'xsrf-1';
    const transport = echoTransport({
      echo,
      channel,
      postUrl: `${backend.url}/toolmark/bridge`,
      headers: () => ({ 'X-XSRF-TOKEN': xsrf }),
    });
    const told = [];
    transport.onStatus((status) => told.push(status));
    const detach = tm.use(bridge({ transport }));
    cleanups.push(() => detach());
    return { tm, errors, transport, told, detach, rotate: (token) => { xsrf = token; } };
  }

  test('a call round trip: published through soketi, answered by a POST to the backend', async () => {
    const start = backend.posts.length;
    const echo = newEcho('token-7');
    const app = page(echo, 'toolmark.7.42');
    const [manifest] = await waitFor(() => postsSince(start, 'manifest').length && postsSince(start, 'manifest'), { what: 'manifest' });
    assert.deepEqual(manifest.json.tools.map((t) => t.name), ['greet']);
    assert.equal(manifest.headers['x-xsrf-token'], 'xsrf-1');
    assert.equal(manifest.headers['content-type'], 'application/json');
    assert.equal(manifest.headers.accept, 'application/json');
    assert.equal(manifest.headers['x-requested-with'], 'XMLHttpRequest');
    await waitFor(async () => (await occupied('private-toolmark.7.42')) === 1, { what: 'subscription on soketi' });
    await waitFor(() => app.transport.status.state === 'open', { what: 'open' });
    assert.deepEqual(app.told, [{ state: 'open' }]);

    const wrapped = call(manifest.json.clientId, 'ada');
    await soketi.publish('private-toolmark.7.42', EVENT, { message: wrapped }); // Laravel's { message } payload
    await waitFor(() => postsSince(start, 'result').length === 1, { what: 'first result' });
    app.rotate('xsrf-2');
    const bare = call(manifest.json.clientId, 'grace');
    await soketi.publish('private-toolmark.7.42', EVENT, bare);
    await waitFor(() => postsSince(start, 'result').length === 2, { what: 'second result' });
    // Another event on the channel, and the public channel of the same name, are not listened to.
    // soketi delivers to the socket in the order published: by the answer to the call after
    // them, both have been passed over.
    await soketi.publish('private-toolmark.7.42', 'other.event', { message: call(manifest.json.clientId, 'x') });
    await soketi.publish('toolmark.7.42', EVENT, { message: call(manifest.json.clientId, 'y') });
    const after = call(manifest.json.clientId, 'lin');
    await soketi.publish('private-toolmark.7.42', EVENT, after);
    await waitFor(() => postsSince(start, 'result').length === 3, { what: 'third result' });

    const results = postsSince(start, 'result');
    assert.deepEqual(results.map((p) => [p.json.id, p.json.result]), [
      [wrapped.id, { status: 'ok', data: 'hello ada' }],
      [bare.id, { status: 'ok', data: 'hello grace' }],
      [after.id, { status: 'ok', data: 'hello lin' }],
    ]);
    assert.deepEqual(results.map((p) => p.headers['x-xsrf-token']), ['xsrf-1', 'xsrf-2', 'xsrf-2']);
    assert.deepEqual(app.errors, []);

    // Disposing the bridge closes the transport: it stops listening and leaves the channel.
    app.detach();
    // Nobody subscribed on soketi: nothing it publishes there reaches the page.
    await waitFor(async () => (await occupied('private-toolmark.7.42')) === 0, { what: 'unsubscribed on soketi' });
    assert.equal(postsSince(start, 'result').length, 3);
  });

  test('connection state: soketi stops and starts again; Echo reconnects and the channel is open again', { timeout: 90_000 }, async () => {
    const own = await startSoketi({ key: soketi.key, secret: soketi.secret, appId: soketi.appId });
    let server = own;
    cleanups.push(() => server.close());
    const echo = new Echo({
      ...pusherEchoOptions({ key: soketi.key, wsHost: own.host, wsPort: own.port }),
      Pusher,
      authEndpoint: `${backend.url}/broadcasting/auth`,
      auth: { headers: { Authorization: 'Bearer token-7' } },
    });
    cleanups.push(() => echo.disconnect());
    const app = page(echo, 'toolmark.7.42');
    await waitFor(() => app.transport.status.state === 'open', { timeoutMs: 10_000, what: 'open' });
    await own.close();
    await waitFor(() => app.told.some((s) => s.state === 'closed'), { timeoutMs: 20_000, what: 'closed' });
    assert.deepEqual(app.told.slice(0, 3), [
      { state: 'open' },
      { state: 'closed', reason: 'connection lost', terminal: false },
      { state: 'connecting', attempt: 1 },
    ]);
    server = await startSoketi({ key: soketi.key, secret: soketi.secret, appId: soketi.appId, port: own.port });
    await waitFor(() => app.transport.status.state === 'open', { timeoutMs: 60_000, intervalMs: 100, what: 'open again' });
    assert.deepEqual(app.told.at(-1), { state: 'open' });
    assert.ok(app.told.every((s) => s.state !== 'closed' || s.terminal === false), JSON.stringify(app.told));
  });

  test('soketi refuses the connection (an unknown app key, pusher:error 4001): Pusher gives up, so the state is closed for good, and the failed attempt is not retrying', async () => {
    const echo = new Echo({
      ...pusherEchoOptions({ key: 'no-such-key', wsHost: soketi.host, wsPort: soketi.port }),
      Pusher,
      authEndpoint: `${backend.url}/broadcasting/auth`,
    });
    cleanups.push(() => echo.disconnect());
    const refused = new Promise((resolve) => echo.connector.pusher.connection.bind('error', resolve));
    const app = page(echo, 'toolmark.7.42');
    assert.equal((await refused).error.data.code, 4001);
    await waitFor(() => app.transport.status.state === 'closed', { what: 'closed' });
    assert.equal(echo.connector.pusher.connection.state, 'disconnected');
    assert.deepEqual(app.told, [{ state: 'closed', reason: 'disconnected', terminal: true }]);
    assert.deepEqual(app.errors.map((e) => e.message), ['transport: connection attempt 1 failed (disconnected); not retrying']);
    // The app connects it again: a new attempt (refused again, for good again).
    echo.connector.pusher.connect();
    await waitFor(() => app.told.length === 3, { what: 'the second attempt' });
    assert.deepEqual(app.told.slice(1), [{ state: 'connecting', attempt: 2 }, { state: 'closed', reason: 'disconnected', terminal: true }]);
  });

  test('a Pusher not started yet (initialized: pusher-js waits for the document body), which Echo names disconnected, is connecting, then open when it connects by itself', async () => {
    // pusher-js's Pusher class (the default export extends it) holds isReady.
    const Base = Object.getPrototypeOf(Pusher);
    Base.isReady = false;
    let echo;
    try {
      echo = newEcho('token-7');
    } finally {
      Base.isReady = true;
    }
    assert.equal(echo.connector.pusher.connection.state, 'initialized');
    assert.equal(echo.connectionStatus(), 'disconnected');
    const app = page(echo, 'toolmark.7.42');
    assert.deepEqual(app.transport.status, { state: 'connecting', attempt: 1 });
    // What Pusher.ready() does for it once the document has a body.
    echo.connector.pusher.connect();
    await waitFor(() => app.transport.status.state === 'open', { what: 'open' });
    assert.deepEqual(app.told, [{ state: 'open' }]);
    assert.deepEqual(app.errors, []);
  });

  test("another user's conversation: the auth route refuses it, soketi never subscribes, nothing arrives", async () => {
    const start = backend.posts.length;
    const authStart = backend.authRequests.length;
    // User 8 asks for user 7's channel; user 7 asks for a channel naming user 7 on user 8's conversation.
    const intruder = page(newEcho('token-8'), 'toolmark.7.42');
    const wrongConversation = page(newEcho('token-7'), 'toolmark.7.43');
    await waitFor(() => authsSince(authStart, 'private-toolmark.7.42').length && authsSince(authStart, 'private-toolmark.7.43').length, { what: 'auth requests' });
    assert.deepEqual(
      backend.authRequests.slice(authStart).map((r) => [r.channel, r.headers.authorization, r.granted]).sort(),
      [['private-toolmark.7.42', 'Bearer token-8', false], ['private-toolmark.7.43', 'Bearer token-7', false]],
    );
    const manifests = await waitFor(() => postsSince(start, 'manifest').length === 2 && postsSince(start, 'manifest'), { what: 'manifests' });
    // Nobody subscribed on soketi: nothing it publishes there reaches a page.
    assert.equal(await occupied('private-toolmark.7.42'), 0);
    assert.equal(await occupied('private-toolmark.7.43'), 0);
    assert.equal(manifests.length, 2);
    // Each is told: closed with the auth route's status, terminal, and a transport_failed error.
    for (const app of [intruder, wrongConversation]) {
      await waitFor(() => app.errors.length === 1, { what: 'the error event' });
      assert.deepEqual(app.transport.status, { state: 'closed', code: 403, reason: 'subscription refused', terminal: true });
      assert.deepEqual(app.errors, [
        { code: 'transport_failed', message: 'transport: connection attempt 1 failed (code 403: subscription refused); not retrying' },
      ]);
    }
  });

  test('a cross-origin postUrl is refused at construction, before the channel is joined', async (t) => {
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'location');
    t.after(() => {
      if (saved) Object.defineProperty(globalThis, 'location', saved);
      else delete globalThis.location;
    });
    Object.defineProperty(globalThis, 'location', { value: new URL(`${backend.url}/app-7.html`), configurable: true });
    const echo = newEcho('token-7');
    const authStart = backend.authRequests.length;
    for (const postUrl of [
      `http://localhost:${backend.port}/toolmark/bridge`,
      `${soketi.url}/toolmark/bridge`,
      `//localhost:${backend.port}/toolmark/bridge`,
      new URL(`http://localhost:${backend.port}/toolmark/bridge`),
    ]) {
      assert.throws(() => echoTransport({ echo, channel: 'toolmark.7.42', postUrl }), (error) => error.name === 'ToolmarkError' && error.code === 'invalid_argument' && /same-origin/.test(error.message), String(postUrl));
    }
    await sleep(100);
    assert.deepEqual(backend.authRequests.slice(authStart), []);
    assert.equal(await occupied('private-toolmark.7.42'), 0);
    // The same-origin forms work against the real backend.
    const start = backend.posts.length;
    for (const postUrl of ['/toolmark/bridge', `${backend.url}/toolmark/bridge`]) {
      const transport = echoTransport({ echo, channel: 'toolmark.7.42', postUrl });
      cleanups.push(() => transport.close());
      await transport.send({ probe: postUrl });
    }
    assert.deepEqual(backend.posts.slice(start).map((p) => p.json), [{ probe: '/toolmark/bridge' }, { probe: `${backend.url}/toolmark/bridge` }]);
  });

  test('a 500 from the POST rejects send and the bridge reports transport_failed', async () => {
    backend.postStatus = 500;
    const start = backend.posts.length;
    const echo = newEcho('token-7');
    const app = page(echo, 'toolmark.7.42');
    await waitFor(() => app.errors.length, { what: 'transport_failed' });
    assert.deepEqual(app.errors.map((e) => e.code), ['transport_failed']);
    assert.match(app.errors[0].message, /answered 500/);
    assert.equal(postsSince(start, 'manifest')[0].status, 500);
    await assert.rejects(app.transport.send({ probe: 1 }), (error) => error instanceof Error && /POST .* answered 500/.test(error.message));

    // A call that arrives meanwhile: its result's POST fails the same way.
    await waitFor(async () => (await occupied('private-toolmark.7.42')) === 1, { what: 'subscription on soketi' });
    await soketi.publish('private-toolmark.7.42', EVENT, { message: call(postsSince(start, 'manifest')[0].json.clientId, 'ada') });
    await waitFor(() => app.errors.length === 2, { what: 'second transport_failed' });
    assert.equal(postsSince(start, 'result')[0].status, 500);
    assert.deepEqual(app.errors.map((e) => e.code), ['transport_failed', 'transport_failed']);
  });
});

describe('in headless Chromium (pusher-js web build, same-origin backend with a session cookie)', () => {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  /** Opens the app as `user` and attaches a bridge over echoTransport on `channel`. */
  /** Opens the app as `user` with a bridge over echoTransport on `channel`. */
  const openApp = (user, channel) =>
    openEchoApp(browser, `${backend.url}/app-${user}.html`, { key: soketi.key, wsHost: soketi.host, wsPort: soketi.port, channel, xsrf: 'xsrf-page' });

  test('a call round trip in the page: same-origin POSTs carry the session cookie', async () => {
    const start = backend.posts.length;
    const page = await openApp(7, 'toolmark.7.42');
    const [manifest] = await waitFor(() => postsSince(start, 'manifest').length && postsSince(start, 'manifest'), { what: 'manifest' });
    assert.equal(manifest.cookies.laravel_session, 'sess-7');
    assert.equal(manifest.headers['sec-fetch-site'], 'same-origin');
    assert.equal(manifest.headers['x-xsrf-token'], 'xsrf-page');
    assert.equal(manifest.headers['x-requested-with'], 'XMLHttpRequest');
    await waitFor(async () => (await occupied('private-toolmark.7.42')) === 1, { what: 'subscription on soketi' });

    const wrapped = call(manifest.json.clientId, 'ada');
    await soketi.publish('private-toolmark.7.42', EVENT, { message: wrapped });
    const [result] = await waitFor(() => postsSince(start, 'result').length && postsSince(start, 'result'), { what: 'result' });
    assert.deepEqual([result.json.id, result.json.result], [wrapped.id, { status: 'ok', data: 'hello ada' }]);
    assert.equal(result.cookies.laravel_session, 'sess-7');
    assert.deepEqual(await page.evaluate(() => window.errors), []);

    await page.evaluate(() => window.detach());
    await waitFor(async () => (await occupied('private-toolmark.7.42')) === 0, { what: 'unsubscribed on soketi' });
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("another user's conversation is refused: no subscription, no answer", async () => {
    const start = backend.posts.length;
    const authStart = backend.authRequests.length;
    const page = await openApp(8, 'toolmark.7.42'); // user 8's session, user 7's conversation
    await waitFor(() => authsSince(authStart, 'private-toolmark.7.42').length, { what: 'auth request' });
    assert.deepEqual(authsSince(authStart, 'private-toolmark.7.42').map((r) => [r.cookies.laravel_session, r.granted]), [['sess-8', false]]);
    const [manifest] = await waitFor(() => postsSince(start, 'manifest').length && postsSince(start, 'manifest'), { what: 'manifest' });
    // Nobody subscribed on soketi: nothing it publishes there reaches the page.
    assert.equal(await occupied('private-toolmark.7.42'), 0);
    assert.equal(manifest.json.type, 'manifest');
    await page.close();
  });

  test('a cross-origin postUrl is refused at construction', async () => {
    const page = await openApp(7, 'toolmark.7.42');
    const out = await page.evaluate((soketiUrl) => {
      const attempt = (postUrl) => {
        try {
          window.echoTransport({ echo: window.echo, channel: 'toolmark.7.42', postUrl }).close();
          return 'accepted';
        } catch (error) {
          return `${error.name}: ${error.message}`;
        }
      };
      return {
        localhost: attempt(`http://localhost:${location.port}/toolmark/bridge`),
        soketi: attempt(`${soketiUrl}/toolmark/bridge`),
        url: attempt(new URL(`http://localhost:${location.port}/x`)),
        relative: attempt('/toolmark/bridge'),
      };
    }, soketi.url);
    assert.match(out.localhost, /^ToolmarkError: .*same-origin/);
    assert.match(out.soketi, /^ToolmarkError: .*same-origin/);
    assert.match(out.url, /^ToolmarkError: .*same-origin/);
    assert.equal(out.relative, 'accepted');
    await page.evaluate(() => window.detach());
    await page.close();
  });

  test('a 500 from the POST is reported as transport_failed', async () => {
    backend.postStatus = 500;
    const start = backend.posts.length;
    const page = await openApp(7, 'toolmark.7.42');
    const errors = await waitFor(async () => {
      const list = await page.evaluate(() => window.errors);
      return list.length > 0 && list;
    }, { what: 'transport_failed' });
    assert.deepEqual(errors.map((e) => e.code), ['transport_failed']);
    assert.match(errors[0].message, /answered 500/);
    assert.equal(postsSince(start, 'manifest')[0].status, 500);
    const rejection = await page.evaluate(() => window.transport.send({ probe: 1 }).then(() => 'sent', (error) => `${error.name}: ${error.message}`));
    assert.match(rejection, /^ToolmarkError: echoTransport: POST http:\/\/127\.0\.0\.1:\d+\/toolmark\/bridge answered 500$/);
    await page.evaluate(() => window.detach());
    await page.close();
  });
});
