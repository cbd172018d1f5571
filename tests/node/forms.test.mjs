// formTools on a real HTML form in headless Chromium, driven by an agent
// through the in-page channel: fill, read, submit with deferred confirmation,
// redaction, the stale-form rule and undo.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { launchChromium, serve } from './support/browser.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
let server;
let browser;
let page;

before(async () => {
  server = await serve(root);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function openForm() {
  page = await browser.newPage();
  await page.goto(`${server.url}/tests/browser/forms.html`);
  await page.waitForFunction(() => window.ready === true && window.agent.clientId !== undefined);
  return page;
}

test('the manifest lists fill, read and submit with their hints and schema', async () => {
  await openForm();
  const out = await page.evaluate(async () => ({
    tools: agent.tools,
    described: await agent.describe('signup.fill'),
  }));
  assert.deepEqual(out.tools.map((t) => [t.name, t.hints]), [
    ['signup.fill', {}],
    ['signup.read', { readOnly: true, untrustedContent: true }],
    ['signup.submit', { consequential: true }],
  ]);
  const schema = out.described.data.inputSchema;
  assert.deepEqual(Object.keys(schema.properties), ['email', 'password', 'card', 'nickname', 'newsletter', 'plan', 'size']);
  assert.deepEqual(schema.properties.newsletter, { type: 'boolean' });
  assert.deepEqual(schema.properties.plan, { enum: ['free', 'pro'] });
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(page.errors, []);
});

test('fill writes the DOM with input events, read redacts sensitive fields, undo restores', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    const filled = await agent.call('signup.fill', {
      email: 'ann@example.com', password: 'hunter2', card: '4111111111111111', newsletter: true, plan: 'pro', size: 'm',
    });
    const values = { email: form.email.value, password: form.password.value, newsletter: form.newsletter.checked, plan: form.plan.value, size: form.size.value };
    const read = await agent.call('signup.read', {});
    const bad = await agent.call('signup.fill', { email: 5 });
    const fillId = sent.find((m) => m.type === 'result' && m.result.status === 'ok').id;
    const undone = await tm.undo(fillId);
    return { filled, values, read, bad, undone, events: inputEvents, after: { email: form.email.value, plan: form.plan.value } };
  });
  assert.deepEqual(out.filled.data.filled, ['email', 'password', 'card', 'newsletter', 'plan', 'size']);
  assert.deepEqual(out.values, { email: 'ann@example.com', password: 'hunter2', newsletter: true, plan: 'pro', size: 'm' });
  assert.ok(out.events >= 6, 'input events fired');
  assert.deepEqual(out.read, {
    status: 'ok',
    data: { email: 'ann@example.com', password: '[redacted]', card: '[redacted]', nickname: '[redacted]', newsletter: true, plan: 'pro', size: 'm' },
  });
  assert.deepEqual(out.bad, { status: 'invalid', issues: [{ path: 'email', message: 'must be string' }] });
  assert.deepEqual(out.undone, { status: 'ok' });
  assert.deepEqual(out.after, { email: '', plan: 'free' });
  assert.deepEqual(page.errors, []);
});

test('submit needs confirmation with redacted changes; approval submits the form', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    await agent.call('signup.fill', { email: 'bo@example.com', password: 'pw', card: '4242', plan: 'pro' });
    const request = await agent.call('signup.submit', {});
    const before = submits.length;
    const pending = tm.pendingConfirmations();
    const confirmed = new Promise((resolve) => agent.onConfirmed(resolve));
    const final = await tm.confirmPending(request.confirmId, true);
    return { request, before, pending, final, confirmed: await confirmed, submits };
  });
  assert.equal(out.request.status, 'needs_confirmation');
  assert.equal(out.request.summary, 'Submit the sign-up form');
  assert.deepEqual(out.request.changes, [
    { path: 'email', after: 'bo@example.com' },
    { path: 'password', after: '[redacted]' },
    { path: 'card', after: '[redacted]' },
    { path: 'plan', before: 'free', after: 'pro' },
  ]);
  assert.equal(out.before, 0, 'nothing submitted before approval');
  assert.equal(out.pending.length, 1);
  assert.deepEqual(out.final, { status: 'ok', data: { submitted: true } });
  assert.deepEqual(out.confirmed.result, out.final);
  assert.equal(out.submits.length, 1);
  assert.equal(out.submits[0].email, 'bo@example.com');
});

test('a form changed after the request is refused stale on approval', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    await agent.call('signup.fill', { email: 'cy@example.com' });
    const request = await agent.call('signup.submit', {});
    form.email.value = 'someone-else@example.com';
    const final = await tm.confirmPending(request.confirmId, true);
    return { final, submits: submits.length };
  });
  assert.equal(out.final.status, 'refused');
  assert.equal(out.final.code, 'stale');
  assert.equal(out.final.message, 'Form changed since confirmation was requested');
  assert.equal(out.submits, 0);
});

test('rejection cancels, and disposing the form tools removes them', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    const request = await agent.call('signup.submit', {});
    const rejected = await tm.confirmPending(request.confirmId, false);
    const rev = tm.rev;
    off();
    await new Promise((r) => setTimeout(r, 0));
    return { rejected, submits: submits.length, revBefore: rev, revAfter: tm.rev, tools: agent.tools.length };
  });
  assert.deepEqual(out.rejected, { status: 'cancelled', by: 'operator' });
  assert.equal(out.submits, 0);
  assert.equal(out.revAfter, out.revBefore + 3);
  assert.equal(out.tools, 0);
});
