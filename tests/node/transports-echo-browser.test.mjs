// echoTransport in real headless Chromium: laravel-echo + pusher-js (web build) in a page
// served by a Laravel-like backend on one 127.0.0.1 origin (page, Pusher-protocol socket,
// channel authorization and the bridge POST route), with real cookies: the session cookie
// goes along same-origin and X-XSRF-TOKEN comes from the XSRF-TOKEN cookie on every send.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { REPO_ROOT, launchChromium } from './support/browser.mjs';
import { ECHO_APP_PAGE, openEchoApp, startEchoBackend } from './support/echo-backend.mjs';
import { waitFor } from './support/ws-agent.mjs';

const SESSION = 'sess-7';
const XSRF = 'eyJpdiI6Ik1x+/=='; // URL-encoded in the cookie, decoded in the header
const CHANNEL = 'toolmark.7.42';
const PRIVATE = `private-${CHANNEL}`;

let backend;
let browser;

before(async () => {
  backend = await startEchoBackend({
    root: REPO_ROOT,
    pages: {
      '/app.html': {
        html: ECHO_APP_PAGE,
        cookies: [`laravel_session=${SESSION}; Path=/; HttpOnly; SameSite=Lax`, `XSRF-TOKEN=${encodeURIComponent(XSRF)}; Path=/; SameSite=Lax`],
      },
    },
    // The user comes from the session; the channel must be this user's conversation.
    authorize: ({ channel, cookies, headers }) =>
      cookies.laravel_session === SESSION && headers['x-csrf-token'] === 'csrf-meta' && channel === PRIVATE,
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await backend?.close();
});

/** Opens the app page with a bridge over echoTransport on `channel`, X-XSRF-TOKEN from the cookie. */
const openApp = (channel = CHANNEL) =>
  openEchoApp(browser, `${backend.url}/app.html`, { key: backend.key, wsHost: backend.host, wsPort: backend.port, channel });

const postsOf = (type) => backend.posts.filter((p) => p.json && p.json.type === type);

test('round trip in Chromium: same-origin POST with session cookie and XSRF header, private channel in', async () => {
  const page = await openApp();
  const [manifest] = await waitFor(() => postsOf('manifest').length && postsOf('manifest'), { what: 'manifest POST' });
  const clientId = manifest.json.clientId;
  assert.deepEqual(manifest.json.tools.map((t) => t.name), ['greet']);
  assert.equal(manifest.cookies.laravel_session, SESSION, 'credentials: same-origin sends the session cookie');
  assert.equal(manifest.headers['x-xsrf-token'], XSRF);
  assert.equal(manifest.headers['content-type'], 'application/json');
  assert.equal(manifest.headers.accept, 'application/json');
  assert.equal(manifest.headers['x-requested-with'], 'XMLHttpRequest');
  assert.equal(manifest.headers['sec-fetch-site'], 'same-origin');
  assert.equal(manifest.headers['sec-fetch-mode'], 'cors');

  const socketId = await waitFor(() => page.evaluate(() => window.echo.socketId()), { what: 'socket id' });
  await waitFor(() => backend.subscribed(socketId, PRIVATE), { what: 'private subscription' });
  assert.deepEqual(backend.subscriptions.map((s) => s.channel), [PRIVATE]);

  const call = (name) => ({ protocol: 1, type: 'call', clientId, id: crypto.randomUUID(), tool: 'greet', input: { name } });
  const wrapped = call('ada');
  backend.broadcast(PRIVATE, 'toolmark.message', { message: wrapped });
  await waitFor(() => postsOf('result').length === 1, { what: 'first result' });

  // The XSRF-TOKEN cookie rotates: headers() is read again on the next send.
  await page.evaluate(() => {
    document.cookie = `XSRF-TOKEN=${encodeURIComponent('rotated/token=')}; path=/`;
  });
  const bare = call('grace');
  backend.broadcast(PRIVATE, 'toolmark.message', bare);
  await waitFor(() => postsOf('result').length === 2, { what: 'second result' });

  const results = postsOf('result');
  assert.deepEqual(results.map((p) => [p.json.id, p.json.result]), [
    [wrapped.id, { status: 'ok', data: 'hello ada' }],
    [bare.id, { status: 'ok', data: 'hello grace' }],
  ]);
  assert.deepEqual(results.map((p) => p.headers['x-xsrf-token']), [XSRF, 'rotated/token=']);
  assert.deepEqual(await page.evaluate(() => window.errors), []);

  // Disposing the bridge closes the transport, which leaves the channel.
  await page.evaluate(() => window.detach());
  await waitFor(() => backend.unsubscriptions.includes(PRIVATE), { what: 'unsubscribe' });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a non-2xx answer is reported as transport_failed', async () => {
  const before = backend.posts.length;
  const page = await openApp();
  await waitFor(() => backend.posts.slice(before).some((p) => p.json?.type === 'manifest'), { what: 'manifest POST' });
  backend.postStatus = 419;
  try {
    await page.evaluate(() => window.tm.register({ name: 'later', description: 'A later tool', run: () => 1 }));
    const errors = await waitFor(async () => {
      const list = await page.evaluate(() => window.errors);
      return list.length > 0 && list;
    }, { what: 'transport_failed' });
    assert.deepEqual(errors.map((e) => e.code), ['transport_failed']);
    assert.match(errors[0].message, /419/);
    assert.equal(backend.posts.at(-1).status, 419);
  } finally {
    backend.postStatus = 200;
    await page.close();
  }
});

test('a cross-origin postUrl is rejected at construction; same-origin forms are accepted', async () => {
  const page = await openApp();
  const out = await page.evaluate(() => {
    const attempt = (postUrl) => {
      try {
        window.echoTransport({ echo: window.echo, channel: 'toolmark.7.42', postUrl, headers: () => ({}) }).close();
        return 'accepted';
      } catch (error) {
        return `${error.name}: ${error.message}`;
      }
    };
    const other = `http://localhost:${location.port}/toolmark/bridge`; // same port, another host: another origin
    const port = `http://127.0.0.1:${Number(location.port) + 1}/toolmark/bridge`;
    return {
      other: attempt(other),
      port: attempt(port),
      https: attempt(`https://127.0.0.1:${location.port}/toolmark/bridge`),
      scheme: attempt('data:application/json,{}'),
      relative: attempt('/toolmark/bridge'),
      absolute: attempt(`${location.origin}/toolmark/bridge`),
    };
  });
  assert.match(out.other, /^ToolmarkError: .*same-origin/);
  assert.match(out.port, /^ToolmarkError: .*same-origin/);
  assert.match(out.https, /^ToolmarkError: .*same-origin/);
  assert.match(out.scheme, /^ToolmarkError: .*same-origin/);
  assert.equal(out.relative, 'accepted');
  assert.equal(out.absolute, 'accepted');
  await page.close();
});

test('an unauthorized private channel delivers nothing', async () => {
  const before = backend.posts.length;
  const page = await openApp('toolmark.8.42'); // not this user's conversation
  await waitFor(() => backend.authRequests.some((r) => r.channel === 'private-toolmark.8.42'), { what: 'auth request' });
  const manifest = await waitFor(() => backend.posts.slice(before).find((p) => p.json?.type === 'manifest'), { what: 'manifest' });
  const socketId = await page.evaluate(() => window.echo.socketId());
  // Not subscribed on the server: nothing it broadcasts there reaches the page.
  assert.equal(backend.subscribed(socketId, 'private-toolmark.8.42'), false);
  assert.equal(manifest.json.type, 'manifest');
  await page.close();
});
