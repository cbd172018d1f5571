// The demo end to end in headless Chromium: the demo app (examples/demo/app)
// served by the demo server binary (examples/server, built with cargo if
// needed) with its scripted agent, over the bridge and chat WebSockets.
// The whole flow; a reload mid-conversation (new clientId, the conversation
// re-bound, the old page's confirmation expired); an answer from a page that
// is no longer the bound one still accepted before its deadline; and a
// confirmation that expired in the page. Then the same flow over the Echo mode:
// echoTransport with Laravel Echo and pusher-js through a real soketi.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from './support/browser.mjs';
import { assembleApp, buildServer, startServer, MODE_VARIABLES, root } from '../../examples/demo/server.mjs';
import { join } from 'node:path';
import { startSoketi } from './support/soketi.mjs';

let server;
let browser;

/** The environment without the server's mode variables: the default mode. */
function demoEnv() {
  const env = { ...process.env };
  for (const name of MODE_VARIABLES) delete env[name];
  return env;
}

before(async () => {
  const binary = buildServer({ quiet: true });
  const staticDir = assembleApp(join(root, 'target', 'demo-app-e2e'));
  server = await startServer({ binary, staticDir, env: demoEnv() });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// Each test is a new session: a new login, a new conversation.
beforeEach(() => browser.context.clearCookies());

/** The bridge socket's frames of `page` (across reloads), parsed. */
function bridgeFrames(page) {
  const frames = [];
  page.on('websocket', (socket) => {
    if (!new URL(socket.url()).pathname.endsWith('/toolmark/ws')) return;
    socket.on('framesent', ({ payload }) => frames.push({ to: 'agent', message: JSON.parse(payload) }));
    socket.on('framereceived', ({ payload }) => frames.push({ to: 'page', message: JSON.parse(payload) }));
  });
  return frames;
}

/** The manifests among the page's messages (bridge socket frames, or `{ to, message }` of Echo's POSTs). */
const manifests = (frames) => frames.filter((f) => f.to === 'agent' && f.message.type === 'manifest').map((f) => f.message);

/**
 * Waits until the server holds the latest manifest `page` sent: the chat
 * names that page's clientId. A line said before that finds no page tools.
 */
async function serverHasManifest(page, sent, { count = 1, timeoutMs = 15000 } = {}) {
  const end = Date.now() + timeoutMs;
  while (manifests(sent).length < count) {
    if (Date.now() > end) assert.fail(`the page sent fewer than ${count} manifests`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { clientId } = manifests(sent).at(-1);
  await page.locator(`#page-tools[data-client-id="${clientId}"]`).waitFor({ timeout: Math.max(end - Date.now(), 1) });
}

/** What the browser console of `page` shows as errors (a failed request such as a 401, an uncaught error). */
function consoleErrors(page) {
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  return errors;
}

/** The person types what the agent is not told: the required name and password. */
async function typeNameAndPassword(page) {
  await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
}

async function openApp(query = '', { typed = true } = {}) {
  const page = await browser.newPage();
  const frames = bridgeFrames(page);
  const consoleSays = consoleErrors(page);
  await page.goto(`${server.url}${query}`);
  await page.getByRole('textbox', { name: 'Message' }).and(page.locator(':enabled')).waitFor();
  await serverHasManifest(page, frames);
  if (typed) await typeNameAndPassword(page);
  return { page, frames, consoleSays };
}

async function say(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** The server's transcript of the page's conversation. */
const transcriptOf = (page) =>
  page.evaluate(async () => {
    const { conversation } = await (await fetch('/api/session')).json();
    return (await (await fetch(`/api/transcript?conversation=${conversation}`)).json()).entries;
  });

async function waitForTranscript(page, until, timeoutMs = 15000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const entries = await transcriptOf(page);
    if (until(entries)) return entries;
    if (Date.now() > end) assert.fail(`transcript never matched:\n${JSON.stringify(entries, null, 1)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const callsTo = (frames) => frames.filter((f) => f.to === 'page' && ['call', 'describe'].includes(f.message.type)).map((f) => f.message);
const acknowledged = (entries) => entries.at(-1)?.kind === 'agent' && entries.at(-2)?.kind === 'confirmation';
const pageCall = (entries, tool) => entries.filter((e) => e.kind === 'tool' && e.name === 'page_call' && e.input.tool === tool);

async function approvePending(page) {
  const pending = page.locator('#pending li').first();
  await pending.waitFor();
  await pending.getByRole('button', { name: 'Approve' }).click();
}

test('the whole flow: sign-up form filled by the agent, confirmation approved in the page, agent acknowledges', async () => {
  const page = await browser.newPage();
  const frames = bridgeFrames(page);
  const consoleSays = consoleErrors(page);
  await page.goto(server.url);
  // The page says the steps: start a conversation, type a name and a password, speak.
  const steps = await page.locator('header .steps').textContent();
  assert.match(steps, /Start a conversation[\s\S]*name and a password[\s\S]*sign me up as ada@example\.com/);
  await page.getByLabel('User name').fill('ada');
  await page.getByRole('button', { name: 'Start a conversation' }).click();
  await serverHasManifest(page, frames);
  await typeNameAndPassword(page);
  await say(page, 'sign me up as ada@example.com');

  const pending = page.locator('#pending li').first();
  await pending.waitFor();
  assert.equal(await page.getByLabel('Email').inputValue(), 'ada@example.com');
  assert.equal(await pending.locator('strong').textContent(), 'Submit the sign-up form');
  assert.equal(await page.locator('#account').textContent(), '', 'nothing submitted before the approval');
  await pending.getByRole('button', { name: 'Approve' }).click();

  const entries = await waitForTranscript(page, acknowledged);
  assert.deepEqual(entries.map((e) => e.kind), ['user', 'tool', 'tool', 'tool', 'agent', 'confirmation', 'agent']);
  assert.deepEqual(entries[1], { kind: 'tool', name: 'page_describe', input: { tool: 'signup.fill' }, outcome: entries[1].outcome });
  const { properties } = entries[1].outcome.data.inputSchema;
  assert.deepEqual(Object.keys(properties), ['email', 'name', 'password', 'plan']);
  // The required fields cannot be filled empty: the page's constraint, in the schema.
  for (const name of ['email', 'name', 'password']) assert.deepEqual(properties[name], { type: 'string', minLength: 1 });
  assert.deepEqual(pageCall(entries, 'signup.fill')[0].outcome, { status: 'ok', data: { filled: ['email'] } });
  const asked = pageCall(entries, 'signup.submit')[0].outcome;
  assert.equal(asked.status, 'needs_confirmation');
  assert.match(entries[4].text, /A confirmation is waiting in the page/);
  assert.equal(entries[5].confirmId, asked.confirmId);
  assert.equal(entries[5].outcome.status, 'ok');
  assert.equal(entries[6].text, 'Done: you approved it and the form was submitted.');
  assert.equal(await page.locator('#account').textContent(), 'Account created for ada@example.com on the free plan.');
  assert.equal(await page.locator('#pending li').count(), 0);

  // The chat panel shows the same entries; the bridge spoke protocol v1 to this page's clientId.
  assert.equal(await page.locator('#transcript li').count(), entries.length);
  const [manifest] = manifests(frames);
  assert.deepEqual(manifest.tools.map((t) => t.name), ['signup.fill', 'signup.read', 'signup.submit']);
  assert.ok(callsTo(frames).length === 3 && callsTo(frames).every((m) => m.clientId === manifest.clientId));
  const confirmed = frames.find((f) => f.message.type === 'confirmed').message;
  assert.equal(confirmed.confirmId, asked.confirmId);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(consoleSays, [], 'nothing in the console: no 401 on load, no failed request');
  await page.close();
});

test('the page shows its connection to the agent: connected, then offline and retrying while the server is down', async () => {
  const own = await startServer({ binary: buildServer({ quiet: true }), staticDir: join(root, 'target', 'demo-app-e2e'), env: demoEnv() });
  const page = await browser.newPage();
  try {
    await page.goto(`${own.url}/?user=ada`);
    const connection = page.locator('#connection');
    await page.locator('#connection[data-state="open"]').waitFor({ timeout: 15000 });
    assert.equal(await connection.textContent(), 'Agent connection: connected');
    await own.close();
    await page.locator('#connection[data-state="reconnecting"]').waitFor({ timeout: 15000 });
    assert.match(await connection.textContent(), /^Agent connection: offline, trying again in \d+\.\d s \(attempt \d+\)$/);
  } finally {
    await page.close();
    await own.close();
  }
});

test('name and password are required: an approved submission of a form without them creates no account and says why', async () => {
  const { page, consoleSays } = await openApp('?user=ada', { typed: false });
  await say(page, 'sign me up as ada@example.com');
  await approvePending(page);
  const entries = await waitForTranscript(page, acknowledged);
  const { outcome } = entries.at(-2);
  assert.equal(outcome.status, 'ok', JSON.stringify(outcome));
  assert.equal(outcome.data.submitted, false);
  assert.deepEqual(outcome.data.invalid.map((issue) => issue.path), ['name', 'password']);
  assert.ok(outcome.data.invalid.every((issue) => issue.message.length > 0), JSON.stringify(outcome));
  assert.match(entries.at(-1).text, /^You approved it, but the form was not submitted \(name: .+; password: .+\)\. Fill those in, then ask me again\.$/);
  assert.equal(await page.locator('#account').textContent(), '', 'no account without a name and a password');
  // The page refuses a short password too, when the person submits it themselves.
  await typeNameAndPassword(page);
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByRole('button', { name: 'Sign up' }).click();
  assert.equal(await page.locator('#account').textContent(), '');
  await page.getByLabel('Password', { exact: true }).fill('long enough now');
  await page.getByRole('button', { name: 'Sign up' }).click();
  assert.equal(await page.locator('#account').textContent(), 'Account created for ada@example.com on the free plan.');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(consoleSays, []);
  await page.close();
});

test('a reload mid-conversation: same conversation, new clientId, the conversation re-bound, the old confirmation expired', async () => {
  const { page, frames } = await openApp('?user=ada');
  await say(page, 'sign me up as ada@example.com');
  await page.locator('#pending li').first().waitFor();
  const before = await transcriptOf(page);
  const [first] = manifests(frames);

  await page.reload();
  await page.getByRole('textbox', { name: 'Message' }).and(page.locator(':enabled')).waitFor();
  await serverHasManifest(page, frames, { count: 2 });
  await typeNameAndPassword(page);
  // The server saw the old page go and a new clientId take the conversation:
  // the old page's pending confirmation expired, and the agent said so.
  const expired = await waitForTranscript(page, acknowledged);
  const [second] = manifests(frames).slice(1);
  assert.ok(second, 'the reloaded page sent its manifest');
  assert.notEqual(second.clientId, first.clientId);
  assert.deepEqual(expired.slice(0, before.length), before, 'the transcript is the same conversation');
  const expiry = expired.at(-2);
  assert.equal(expiry.kind, 'confirmation');
  assert.equal(expiry.confirmId, pageCall(before, 'signup.submit')[0].outcome.confirmId);
  assert.deepEqual([expiry.outcome.status, expiry.outcome.code], ['refused', 'confirmation_expired']);
  assert.match(expired.at(-1).text, /expired/);
  await page.locator('#transcript li').nth(expired.length - 1).waitFor();
  assert.equal(await page.locator('#pending li').count(), 0, 'a reload drops the page’s pending list');

  // The agent's next calls go to the new clientId, and the flow completes there.
  const callsBefore = callsTo(frames).length;
  await say(page, 'sign me up as ada@example.com');
  await approvePending(page);
  const done = await waitForTranscript(page, (entries) => entries.length > expired.length && acknowledged(entries));
  assert.equal(done.at(-1).text, 'Done: you approved it and the form was submitted.');
  const after = callsTo(frames).slice(callsBefore);
  assert.equal(after.length, 3);
  assert.ok(after.every((m) => m.clientId === second.clientId), JSON.stringify(after));
  assert.deepEqual(page.errors, []);
  await page.close();
});

/**
 * Holds the page's `result` frames of fill calls (`data.filled`) until
 * `window.releaseHeld()`: an answer still on its way when another page load
 * takes the conversation. (Picked by content: the page may answer a call
 * before any listener added here would see it.)
 */
const holdFillResults = (page) =>
  page.evaluate(() => {
    const send = WebSocket.prototype.send;
    const held = [];
    window.held = held;
    window.releaseHeld = () => held.splice(0).forEach(([socket, data]) => send.call(socket, data));
    WebSocket.prototype.send = function (data) {
      const message = typeof data === 'string' ? JSON.parse(data) : undefined;
      if (message?.type === 'result' && Array.isArray(message.result?.data?.filled)) held.push([this, data]);
      else send.call(this, data);
    };
  });

test('a page load that takes the conversation re-binds it; the previous page’s answer is still accepted before its deadline', async () => {
  const { page: first, frames: firstFrames } = await openApp('?user=ada');
  await holdFillResults(first);
  await say(first, 'sign me up as ada@example.com');
  await first.waitForFunction(() => window.held.length === 1);
  const [firstManifest] = manifests(firstFrames);
  const fill = callsTo(firstFrames).find((m) => m.tool === 'signup.fill');
  assert.equal(fill.clientId, firstManifest.clientId);
  assert.equal(await first.getByLabel('Email').inputValue(), 'ada@example.com', 'the first page ran the fill');

  // A second load of the app (same session cookie) re-opens the conversation
  // with a new clientId while the first page is still open.
  const { page: second, frames: secondFrames } = await openApp();
  // The fill ran on the first page: the person types the email here too (the form requires it).
  await second.getByLabel('Email').fill('ada@example.com');
  const [secondManifest] = manifests(secondFrames);
  assert.notEqual(secondManifest.clientId, firstManifest.clientId);
  assert.deepEqual((await transcriptOf(second)).map((e) => e.kind).slice(0, 2), ['user', 'tool']);

  // The answer from the first page's clientId, sent after the re-binding, counts.
  await first.evaluate(() => window.releaseHeld());
  await approvePending(second);
  const entries = await waitForTranscript(second, acknowledged);
  assert.deepEqual(pageCall(entries, 'signup.fill')[0].outcome, { status: 'ok', data: { filled: ['email'] } });
  assert.equal(entries.at(-1).text, 'Done: you approved it and the form was submitted.');
  // Everything after the re-binding went to the second page.
  const later = callsTo(secondFrames);
  assert.ok(later.length > 0 && later.every((m) => m.clientId === secondManifest.clientId), JSON.stringify(later));
  assert.equal(callsTo(firstFrames).length, 2, 'the first page got the describe and the fill only');
  assert.deepEqual(later.map((m) => m.tool), ['signup.submit']);
  assert.deepEqual([...first.errors, ...second.errors], []);
  await first.close();
  await second.close();
});

test('a confirmation nobody decides expires in the page (confirmExpiryMs 1500) and the agent reports it', async () => {
  const { page, frames } = await openApp('?user=ada&confirmExpiryMs=1500');
  await say(page, 'sign me up as ada@example.com');
  const pending = page.locator('#pending li').first();
  await pending.waitFor();
  const asked = Date.now();
  const entries = await waitForTranscript(page, acknowledged);
  assert.ok(Date.now() - asked >= 1000, 'not before its expiry');
  const confirmation = entries.at(-2);
  assert.deepEqual([confirmation.outcome.status, confirmation.outcome.code], ['refused', 'confirmation_expired']);
  assert.equal(confirmation.confirmId, pageCall(entries, 'signup.submit')[0].outcome.confirmId);
  assert.equal(
    entries.at(-1).text,
    'The confirmation expired before it was approved, so nothing was submitted. Ask me again if you still want it.',
  );
  const confirmed = frames.filter((f) => f.message.type === 'confirmed').map((f) => f.message);
  assert.equal(confirmed.length, 1, 'the page sent the expiry as confirmed');
  assert.deepEqual(confirmed[0].result.code, 'confirmation_expired');
  await page.locator('#no-pending').waitFor();
  assert.equal(await page.locator('#pending li').count(), 0);
  assert.equal(await page.locator('#account').textContent(), '');
  assert.deepEqual(page.errors, []);
  await page.close();
});

describe('the Echo mode, through soketi', () => {
  let soketi;
  let echoServer;

  before(async () => {
    soketi = await startSoketi();
    const env = { ...process.env };
    for (const name of MODE_VARIABLES) delete env[name];
    Object.assign(env, {
      PUSHER_APP_ID: soketi.appId,
      PUSHER_APP_KEY: soketi.key,
      PUSHER_APP_SECRET: soketi.secret,
      PUSHER_URL: soketi.url,
    });
    echoServer = await startServer({
      binary: buildServer({ quiet: true }),
      staticDir: join(root, 'target', 'demo-app-e2e'),
      env,
    });
  });

  after(async () => {
    await echoServer?.close();
    await soketi?.close();
  });

  test('the whole flow: the page POSTs its messages, the agent’s calls come over the private channel', async () => {
    assert.ok(echoServer.lines.some((line) => line.startsWith('Echo mode: publishing to')), echoServer.lines.join('\n'));
    const page = await browser.newPage();
    const posts = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/toolmark/bridge') posts.push({ to: 'agent', message: JSON.parse(request.postData()) });
    });
    const sockets = [];
    page.on('websocket', (socket) => sockets.push(new URL(socket.url()).pathname));
    await page.goto(`${echoServer.url}?user=ada&echo=${soketi.key}@${soketi.host}:${soketi.port}`);
    await page.getByRole('textbox', { name: 'Message' }).and(page.locator(':enabled')).waitFor();
    await typeNameAndPassword(page);
    const { conversation } = await page.evaluate(async () => (await fetch('/api/session')).json());
    const channel = `private-toolmark.ada.${conversation}`;
    const deadline = Date.now() + 10000;
    while (((await soketi.channel(channel)).subscription_count ?? 0) !== 1) {
      assert.ok(Date.now() < deadline, 'the page never subscribed to its private channel');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await serverHasManifest(page, posts);

    await say(page, 'sign me up as ada@example.com');
    await approvePending(page);
    const entries = await waitForTranscript(page, acknowledged);
    assert.deepEqual(entries.map((e) => e.kind), ['user', 'tool', 'tool', 'tool', 'agent', 'confirmation', 'agent']);
    assert.deepEqual(pageCall(entries, 'signup.fill')[0].outcome, { status: 'ok', data: { filled: ['email'] } });
    assert.equal(pageCall(entries, 'signup.submit')[0].outcome.status, 'needs_confirmation');
    assert.equal(entries.at(-2).outcome.status, 'ok');
    assert.equal(entries.at(-1).text, 'Done: you approved it and the form was submitted.');
    assert.equal(await page.locator('#account').textContent(), 'Account created for ada@example.com on the free plan.');

    // Everything of the bridge went over Echo: POSTs out, soketi in; no bridge socket.
    assert.deepEqual(posts.map((p) => p.message.type), ['manifest', 'result', 'result', 'result', 'confirmed']);
    assert.ok(!sockets.some((path) => path.endsWith('/toolmark/ws')), sockets.join(', '));
    assert.ok(sockets.some((path) => path.startsWith('/app/')), 'pusher-js connected to soketi');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
