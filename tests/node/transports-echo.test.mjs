// echoTransport with the real laravel-echo + pusher-js (Node build) clients against a
// minimal Pusher-protocol server and a Laravel-like HTTP backend on 127.0.0.1
// (tests/node/support/echo-backend.mjs). The same flow in Chromium, with real cookies
// and a real same-origin check, is in transports-echo-browser.test.mjs; the policy's
// rules (postUrl's origin, the request's shape, the payloads) are the unit tests of
// src/transport/echo.rs.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import Echo from 'laravel-echo';
import Pusher from 'pusher-js';
import { startEchoBackend } from './support/echo-backend.mjs';
import { waitFor } from './support/ws-agent.mjs';
import { greeterPage, nonFunctionRefusals, pusherEchoOptions } from './support/transport-page.mjs';

const { newId } = await import(new URL('../../pkg/index.js', import.meta.url));
const { bridge } = await import(new URL('../../pkg/bridge/index.js', import.meta.url));
const echoModule = await import(new URL('../../pkg/bridge/echo.js', import.meta.url));
const { echoTransport } = echoModule;

const CHANNEL = 'toolmark.7.42'; // toolmark.{user}.{conversation}
const PRIVATE = `private-${CHANNEL}`;
const USER_TOKEN = 'user-7-token';

let backend;
const cleanups = [];

before(async () => {
  backend = await startEchoBackend({
    // The channel authorization checks user and conversation (Security MUST 1).
    authorize: ({ channel, headers }) => headers.authorization === `Bearer ${USER_TOKEN}` && channel === PRIVATE,
  });
});
after(() => backend.close());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  backend.postStatus = 200;
  backend.onPost = undefined;
});

function newEcho() {
  const echo = new Echo({
    ...pusherEchoOptions({ key: backend.key, wsHost: backend.host, wsPort: backend.port }),
    Pusher,
    authEndpoint: `${backend.url}/broadcasting/auth`,
    bearerToken: USER_TOKEN,
  });
  cleanups.push(() => echo.disconnect());
  return echo;
}

function newTransport(options) {
  const transport = echoTransport({ postUrl: `${backend.url}/toolmark/bridge`, ...options });
  cleanups.push(() => transport.close());
  return transport;
}

const postsOf = (type) => backend.posts.filter((p) => p.json && p.json.type === type);

test('the module exports only echoTransport, and validates its options', () => {
  assert.deepEqual(Object.keys(echoModule), ['echoTransport']);
  assert.throws(() => echoTransport({ channel: CHANNEL }), /Echo instance/);
  const echo = { private: () => ({}) };
  assert.throws(() => echoTransport({ echo }), /channel/);
  assert.throws(() => echoTransport({ echo, channel: CHANNEL, headers: { 'X-XSRF-TOKEN': 'x' } }), /headers must be a function/);
  // The rules are the core's, on the options' JS types: a URL object is its text;
  // null is not a function.
  assert.throws(() => echoTransport({ echo, channel: CHANNEL, fetch: null }), { code: 'invalid_argument', message: 'echoTransport: fetch must be a function' });
  assert.throws(() => echoTransport({ echo, channel: CHANNEL, postUrl: { href: '/x' } }), { code: 'invalid_argument', message: 'echoTransport: postUrl must be a string or URL' });
  assert.throws(() => echoTransport({ echo: { private: {} }, channel: CHANNEL }), /Echo instance/);
  const subscribed = [];
  const t = echoTransport({ echo: { private: (channel) => (subscribed.push(channel), {}) }, channel: CHANNEL, postUrl: new URL('http://127.0.0.1:1/in') });
  t.close();
  assert.deepEqual(subscribed, [CHANNEL]);
});

test('onMessage and onStatus refuse a callback that is no function, also once closed; once closed they keep nothing', () => {
  const transport = newTransport({ echo: newEcho(), channel: CHANNEL });
  const refused = ['onMessage', 'onStatus'].flatMap((method) =>
    Array(3).fill(`${method}: ToolmarkError invalid_argument: echoTransport: ${method}(callback) needs a function`),
  );
  assert.deepEqual(nonFunctionRefusals(transport), refused);
  transport.close();
  assert.deepEqual(nonFunctionRefusals(transport), refused);
  const late = [];
  const offs = [transport.onMessage((m) => late.push(m)), transport.onStatus((s) => late.push(s))];
  assert.deepEqual(offs.map((f) => typeof f), ['function', 'function']);
  for (const unsubscribe of offs) unsubscribe();
  assert.deepEqual(late, []);
});

test('a subscriber that closes the transport while Pusher dispatches a broadcast: nothing throws, the closed transport delivers no more', () => {
  const echo = newEcho();
  const transport = newTransport({ echo, channel: CHANNEL });
  const got = [];
  transport.onMessage((m) => {
    got.push(`first ${m.n}`);
    transport.close();
  });
  transport.onMessage((m) => got.push(`second ${m.n}`));
  // As pusher-js hands a frame's event to the channel: its listeners as the event began.
  echo.connector.pusher.channel(PRIVATE).emit('toolmark.message', { n: 1 });
  assert.deepEqual(got, ['first 1']);
});

test('round trip over a private channel: manifest POSTed, { message } and bare payloads answered', async () => {
  const echo = newEcho();
  let token = 'xsrf-1';
  const { tm, errors } = greeterPage();
  const transport = newTransport({ echo, channel: CHANNEL, headers: () => ({ 'X-XSRF-TOKEN': token }) });
  tm.use(bridge({ transport }));

  const [manifest] = await waitFor(() => postsOf('manifest').length && postsOf('manifest'), { what: 'manifest POST' });
  assert.deepEqual(manifest.json.tools.map((t) => t.name), ['greet']);
  const { headers } = manifest;
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(headers.accept, 'application/json');
  assert.equal(headers['x-requested-with'], 'XMLHttpRequest');
  assert.equal(headers['x-xsrf-token'], 'xsrf-1');
  const clientId = manifest.json.clientId;

  // Only the private channel was joined, through the authorization route.
  await waitFor(() => backend.subscribed(echo.socketId(), PRIVATE), { what: 'subscription' });
  assert.deepEqual(backend.subscriptions, [{ channel: PRIVATE, granted: true }]);
  assert.deepEqual(backend.authRequests.map((r) => [r.channel, r.granted]), [[PRIVATE, true]]);

  // A public channel of the same name is never listened to.
  const decoy = { protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input: { name: 'public' } };
  backend.broadcast(CHANNEL, 'toolmark.message', decoy);

  // Laravel's `{ message }` payload, then a bare one; headers() is read again on every send.
  const wrapped = { protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input: { name: 'ada' } };
  backend.broadcast(PRIVATE, 'toolmark.message', { message: wrapped });
  await waitFor(() => postsOf('result').length === 1, { what: 'first result' });
  token = 'xsrf-2';
  const bare = { protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input: { name: 'grace' } };
  backend.broadcast(PRIVATE, 'toolmark.message', bare);
  await waitFor(() => postsOf('result').length === 2, { what: 'second result' });
  // Another event name on the channel is not ours. The channel's events arrive in order:
  // by the answer to the call after it, it has been passed over.
  backend.broadcast(PRIVATE, 'other.event', { message: { ...bare, id: newId() } });
  const after = { ...bare, id: newId(), input: { name: 'lin' } };
  backend.broadcast(PRIVATE, 'toolmark.message', after);
  await waitFor(() => postsOf('result').length === 3, { what: 'third result' });

  const results = postsOf('result');
  assert.deepEqual(results.map((p) => [p.json.id, p.json.result]), [
    [wrapped.id, { status: 'ok', data: 'hello ada' }],
    [bare.id, { status: 'ok', data: 'hello grace' }],
    [after.id, { status: 'ok', data: 'hello lin' }],
  ]);
  assert.deepEqual(results.map((p) => p.headers['x-xsrf-token']), ['xsrf-1', 'xsrf-2', 'xsrf-2']);
  assert.deepEqual(errors, []);
});

// Pusher calls a channel's listeners in one loop: a subscriber that throws
// must not keep the message from the bridge's listener after it, and its
// error goes to the host's reporter (reportError; Node has none, so
// console.error), never into Pusher's socket handler.
test('a subscriber that throws is reported and the bridge still gets the message', async (t) => {
  const reported = [];
  const logged = [];
  t.mock.method(console, 'error', (error) => logged.push(String(error?.message)));
  const manifestsBefore = postsOf('manifest').length;
  const echo = newEcho();
  const { tm, errors } = greeterPage();
  const transport = newTransport({ echo, channel: CHANNEL, headers: () => ({}) });
  transport.onMessage(() => {
    throw new Error('subscriber bug');
  });
  tm.use(bridge({ transport }));
  const manifest = await waitFor(() => postsOf('manifest').at(manifestsBefore), { what: 'manifest POST' });
  await waitFor(() => backend.subscribed(echo.socketId(), PRIVATE), { what: 'subscription' });
  const clientId = manifest.json.clientId;
  const results = () => postsOf('result').filter((p) => p.json.clientId === clientId);

  const first = { protocol: 1, type: 'call', clientId, id: newId(), tool: 'greet', input: { name: 'ada' } };
  backend.broadcast(PRIVATE, 'toolmark.message', { message: first });
  await waitFor(() => results().length === 1, { what: 'a result despite the throwing subscriber' });
  assert.deepEqual(logged, ['subscriber bug']);

  globalThis.reportError = (error) => reported.push(String(error?.message));
  try {
    const second = { ...first, id: newId(), input: { name: 'grace' } };
    backend.broadcast(PRIVATE, 'toolmark.message', second);
    await waitFor(() => results().length === 2, { what: 'the second result' });
  } finally {
    delete globalThis.reportError;
  }
  assert.deepEqual(reported, ['subscriber bug']);
  assert.deepEqual(logged, ['subscriber bug']);
  assert.deepEqual(results().map((p) => p.json.result), [
    { status: 'ok', data: 'hello ada' },
    { status: 'ok', data: 'hello grace' },
  ]);
  assert.deepEqual(errors, []);
});

test('a channel the user may not join is never subscribed, so nothing arrives', async () => {
  const echo = newEcho();
  const seen = [];
  const transport = newTransport({ echo, channel: 'toolmark.8.42', headers: () => ({}) });
  const statuses = [];
  transport.onStatus((status) => statuses.push(status));
  transport.onMessage((m) => seen.push(m));
  await waitFor(() => backend.authRequests.some((r) => r.channel === 'private-toolmark.8.42'), { what: 'auth request' });
  // The refusal is the transport's end: closed for good, with the HTTP status.
  const closed = await waitFor(() => statuses.find((s) => s.state === 'closed'), { what: 'refused subscription' });
  assert.equal(closed.terminal, true);
  assert.equal(typeof closed.code, 'number');
  backend.broadcast('private-toolmark.8.42', 'toolmark.message', { message: { x: 1 } });
  assert.equal(backend.subscribed(echo.socketId(), 'private-toolmark.8.42'), false);
  assert.deepEqual(seen, []);
});

test('a non-2xx answer or a network failure rejects send, reported as transport_failed', async () => {
  const echo = newEcho();
  const { tm, errors } = greeterPage();
  backend.postStatus = 419; // Laravel's CSRF token mismatch
  const transport = newTransport({ echo, channel: CHANNEL, headers: () => ({ 'X-XSRF-TOKEN': 'stale' }) });
  await assert.rejects(transport.send({ probe: 1 }), /419/);
  tm.use(bridge({ transport }));
  await waitFor(() => errors.some((e) => e.code === 'transport_failed'), { what: 'transport_failed' });
  assert.match(errors.find((e) => e.code === 'transport_failed').message, /419/);

  backend.postStatus = 500;
  await assert.rejects(transport.send({ probe: 2 }), /500/);

  const down = echoTransport({ echo, channel: CHANNEL, postUrl: 'http://127.0.0.1:1/toolmark/bridge' });
  cleanups.push(() => down.close());
  await assert.rejects(down.send({ probe: 3 }));

  const throwing = echoTransport({ echo, channel: CHANNEL, postUrl: `${backend.url}/toolmark/bridge`, headers: () => { throw new Error('no cookie'); } });
  cleanups.push(() => throwing.close());
  await assert.rejects(throwing.send({ probe: 4 }), /no cookie/);
});

test('fetch can be injected: the exact request echoTransport makes', async () => {
  const calls = [];
  const echo = newEcho();
  const transport = newTransport({
    echo,
    channel: CHANNEL,
    postUrl: 'https://app.test/toolmark/bridge',
    headers: () => ({ 'X-XSRF-TOKEN': 'tok' }),
    fetch: async (url, init) => {
      calls.push({ url, init });
      return { ok: true, status: 204 };
    },
  });
  await transport.send({ protocol: 1, type: 'changed', clientId: 'c', rev: 1 });
  assert.deepEqual(calls, [{
    url: 'https://app.test/toolmark/bridge',
    init: {
      method: 'POST',
      credentials: 'same-origin',
      redirect: 'error',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest', 'X-XSRF-TOKEN': 'tok' },
      body: '{"protocol":1,"type":"changed","clientId":"c","rev":1}',
    },
  }]);
});

test('unsubscribing uses stopListening; close() leaves the private channel and ends sending', async () => {
  const echo = newEcho();
  const transport = echoTransport({ echo, channel: CHANNEL, postUrl: `${backend.url}/toolmark/bridge` });
  const first = [];
  const second = [];
  const offFirst = transport.onMessage((m) => first.push(m));
  transport.onMessage((m) => second.push(m));
  await waitFor(() => backend.subscribed(echo.socketId(), PRIVATE), { what: 'subscription' });
  backend.broadcast(PRIVATE, 'toolmark.message', { message: { n: 1 } });
  await waitFor(() => second.length === 1, { what: 'n=1' });
  offFirst();
  backend.broadcast(PRIVATE, 'toolmark.message', { n: 2 });
  await waitFor(() => second.length === 2, { what: 'n=2' });
  assert.deepEqual(first, [{ n: 1 }]);
  assert.deepEqual(second, [{ n: 1 }, { n: 2 }]);

  transport.close();
  await waitFor(() => backend.unsubscriptions.includes(PRIVATE), { what: 'unsubscribe' });
  assert.equal(echo.connector.channels[PRIVATE], undefined);
  await assert.rejects(transport.send({ n: 3 }), /closed/);
});

test('close() leaves a shared channel only as its last transport, and never one the app joined first', async () => {
  backend.unsubscriptions.length = 0;
  // Two transports on one channel the app never joined.
  const echo = newEcho();
  const first = newTransport({ echo, channel: CHANNEL });
  const second = newTransport({ echo, channel: CHANNEL });
  const toSecond = [];
  second.onMessage((m) => toSecond.push(m));
  await waitFor(() => backend.subscribed(echo.socketId(), PRIVATE), { what: 'subscription' });
  first.close();
  backend.broadcast(PRIVATE, 'toolmark.message', { what: 'after the first closed' });
  await waitFor(() => toSecond.length === 1, { what: 'the second still listening' });
  assert.deepEqual(toSecond, [{ what: 'after the first closed' }]);
  assert.equal(backend.unsubscriptions.includes(PRIVATE), false);
  assert.equal(second.status.state, 'open');
  second.close();
  await waitFor(() => backend.unsubscriptions.includes(PRIVATE), { what: 'unsubscribe' });
  assert.equal(echo.connector.channels[PRIVATE], undefined);

  // A channel the app joined before the transport stays the app's.
  backend.unsubscriptions.length = 0;
  const appEcho = newEcho();
  const toApp = [];
  appEcho.private(CHANNEL).listen('.app.event', (m) => toApp.push(m));
  const transport = newTransport({ echo: appEcho, channel: CHANNEL });
  await waitFor(() => backend.subscribed(appEcho.socketId(), PRIVATE), { what: 'app subscription' });
  transport.close();
  backend.broadcast(PRIVATE, 'app.event', { what: 'still the app' });
  await waitFor(() => toApp.length === 1, { what: 'the app still subscribed' });
  assert.deepEqual(toApp, [{ what: 'still the app' }]);
  assert.equal(backend.unsubscriptions.includes(PRIVATE), false);
  assert.notEqual(appEcho.connector.channels[PRIVATE], undefined);
});
