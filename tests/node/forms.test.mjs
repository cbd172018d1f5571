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

test("formTools' arguments: the core's refusals thrown as invalid_argument, in order; sensitive null is none", async () => {
  await openForm();
  const out = await page.evaluate(() => {
    const thrown = (f) => { try { f(); return 'returned'; } catch (e) { return `${e.code}: ${e.message}`; } };
    const scope = tm.scope('other');
    const refused = {
      form: thrown(() => formTools({ elements: form.elements }, { scope: {} })),
      scope: thrown(() => formTools(form, { scope: {}, sensitive: 'card' })),
      sensitive: thrown(() => formTools(form, { scope, sensitive: 'card' })),
    };
    const offNull = formTools(form, { scope, sensitive: null });
    const registered = tm.manifest().filter((t) => t.name.startsWith('other.')).length;
    offNull();
    return { refused, registered };
  });
  assert.deepEqual(out, {
    refused: {
      form: 'invalid_argument: formTools: form must be an HTMLFormElement',
      scope: "invalid_argument: formTools: options.scope must be a scope (tm.scope('name'))",
      sensitive: 'invalid_argument: formTools: options.sensitive must be an array of paths',
    },
    registered: 3,
  });
  assert.deepEqual(page.errors, []);
});

test('formTools whose scope refuses one of its tools throws and leaves none of them registered', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    const { createToolmark } = await import('/pkg/index.js');
    const dev = createToolmark({ dev: true });
    const scope = dev.scope('signup');
    scope.register({ name: 'read', description: "The app's own", run: () => 'mine' });
    let thrown;
    try {
      formTools(form, { scope });
    } catch (error) {
      thrown = `${error.code}: ${error.message}`;
    }
    return { thrown, tools: dev.manifest().map((t) => t.name), read: await dev.call('signup.read', {}) };
  });
  assert.deepEqual(out, {
    thrown: "duplicate_name: a tool named 'signup.read' is already registered",
    tools: ['signup.read'],
    read: { status: 'ok', data: 'mine' },
  });
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

// ---------------------------------------------------------------------------
// The stale-form rule and sensitivity against an agent that attacks them.
// Each test builds its form on a blank page (`build`), with the package's
// exports on `window`.

const LAB = `<!doctype html>
<meta charset="utf-8">
<title>formTools lab</title>
<div id="root"></div>
<script type="module">
  import { createToolmark, formTools } from '/pkg/index.js';
  import { bridge } from '/pkg/bridge/index.js';
  import { createInPageChannel } from '/pkg/bridge/in-page.js';
  window.build = (html, options = {}) => {
    document.getElementById('root').innerHTML = html;
    const form = document.querySelector('form');
    window.submits = [];
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      window.submits.push(Object.fromEntries(new FormData(form)));
    });
    const tm = createToolmark();
    const { transport, agent } = createInPageChannel();
    window.sent = [];
    agent.onMessage((m) => window.sent.push(m));
    tm.use(bridge({ transport }));
    const off = formTools(form, { scope: tm.scope('f'), ...options });
    Object.assign(window, { tm, agent, off, form });
  };
  window.ready = true;
</script>`;

let lab;

async function openLab(html, options) {
  lab ??= await serve(root, { '/lab.html': LAB });
  page = await browser.newPage();
  await page.goto(`${lab.url}/lab.html`);
  await page.waitForFunction(() => window.ready === true);
  await page.evaluate(([html, options]) => window.build(html, options), [html, options]);
  await page.waitForFunction(() => window.agent.clientId !== undefined);
  return page;
}

after(async () => {
  await lab?.close();
});

/** A 64-bit non-cryptographic fingerprint of a form's JSON (two FNV-1a-style lanes over UTF-16 code units): what the forgery collides under. */
function oldFingerprint(text) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 ^ 0x2f) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

const TRANSFER = `<form aria-label="transfer">
  <input name="to" type="email">
  <input name="amount" type="number">
  <input name="memo">
  <select name="account"><option value="checking" selected>Checking</option><option value="savings">Savings</option></select>
</form>`;

test('stale: a refill forged to collide with a 64-bit fingerprint of the form is refused on approval', async () => {
  // The agent refills `to` and `amount` and appends 7 chosen characters to
  // the memo: the form's JSON differs, its old fingerprint does not.
  const requested = { to: 'alice@example.com', amount: 100, memo: 'March rent' };
  const forged = { to: 'mallory@evil.example', amount: 9999, memo: 'March rent !+&$Em' };
  const json = (fields) => JSON.stringify({ ...fields, account: 'checking' });
  assert.notEqual(json(requested), json(forged));
  assert.equal(oldFingerprint(json(requested)), oldFingerprint(json(forged)), 'the forgery collides');

  await openLab(TRANSFER);
  const out = await page.evaluate(async ([requested, forged]) => {
    await agent.call('f.fill', requested);
    const request = await agent.call('f.submit', {});
    const refill = await agent.call('f.fill', forged);
    const values = { to: form.to.value, amount: form.amount.value, memo: form.memo.value };
    const final = await tm.confirmPending(request.confirmId, true);
    return { request, refill, values, final, submits };
  }, [requested, forged]);
  assert.equal(out.request.status, 'needs_confirmation');
  assert.equal(out.refill.status, 'ok');
  assert.deepEqual(out.values, { to: forged.to, amount: '9999', memo: forged.memo });
  assert.equal(out.final.status, 'refused');
  assert.equal(out.final.code, 'stale');
  assert.deepEqual(out.submits, [], 'the changed form is not submitted');
  assert.deepEqual(page.errors, []);
});

test('stale: a change to any control of a field, not only the one its value reads (a second to[] input, a box of a checkbox group, the checkbox after a hidden input of its name), is refused on approval', async () => {
  await openLab(`<form aria-label="mail">
    <input name="to[]" value="ann@example.com"><input name="to[]">
    <input type="checkbox" name="tags" value="news"><input type="checkbox" name="tags" value="offers">
    <input type="hidden" name="agree" value="0"><input type="checkbox" name="agree" value="1">
  </form>`);
  const out = await page.evaluate(async () => {
    const inputs = form.querySelectorAll('input');
    const changes = [
      () => (inputs[1].value = 'mallory@evil.example'),
      () => (inputs[3].checked = true),
      () => (inputs[5].checked = true),
    ];
    const finals = [];
    for (const change of changes) {
      const request = await agent.call('f.submit', {});
      change();
      finals.push((await tm.confirmPending(request.confirmId, true)).code);
    }
    return { finals, submits };
  });
  assert.deepEqual(out.finals, ['stale', 'stale', 'stale']);
  assert.deepEqual(out.submits, [], 'no changed form is submitted');
  assert.deepEqual(page.errors, []);
});

test('a control in a disabled fieldset is no field: not in the schema, not read, not filled, as the form does not submit it', async () => {
  await openLab(`<form aria-label="billing">
    <input name="email">
    <fieldset disabled><input name="vat" value="FR123"></fieldset>
  </form>`);
  const out = await page.evaluate(async () => {
    const fill = (await agent.call('f.fill', { email: 'a@example.com', vat: 'FR999' })).status;
    const read = (await agent.call('f.read', {})).data;
    const schema = Object.keys((await agent.describe('f.fill')).data.inputSchema.properties);
    return { fill, read, vat: form.vat.value, schema };
  });
  assert.deepEqual(out, { fill: 'invalid', read: {}, vat: 'FR123', schema: ['email'] });
  assert.deepEqual(page.errors, []);
});

test('fill fires the events a person\'s edit fires: in a radio group only on the radio checked, none for a value written again', async () => {
  await openLab(`<form aria-label="order">
    <input type="radio" name="size" value="s" checked><input type="radio" name="size" value="m"><input type="radio" name="size" value="l">
    <input name="qty" value="1">
  </form>`);
  const out = await page.evaluate(async () => {
    const events = [];
    for (const kind of ['input', 'change']) {
      form.addEventListener(kind, (e) => events.push(`${kind}:${e.target.name}=${e.target.value}`));
    }
    const radio = await agent.call('f.fill', { size: 'l' });
    const radioEvents = events.splice(0);
    const again = await agent.call('f.fill', { size: 'l', qty: '1' });
    const same = events.splice(0);
    const qty = await agent.call('f.fill', { qty: '2' });
    return { statuses: [radio.status, again.status, qty.status], radioEvents, same, changed: events, size: form.size.value, qty: form.qty.value };
  });
  assert.deepEqual(out, {
    statuses: ['ok', 'ok', 'ok'],
    radioEvents: ['input:size=l', 'change:size=l'],
    same: [],
    changed: ['input:qty=2', 'change:qty=2'],
    size: 'l',
    qty: '2',
  });
  assert.deepEqual(page.errors, []);
});

test('submit answers submitted: false with the reason when the browser fires no submit event (the form out of the document, an unnamed control failing its constraints)', async () => {
  await openLab(`<form aria-label="terms">
    <input name="email" value="a@example.com">
    <input type="checkbox" required>
  </form>`);
  const out = await page.evaluate(async () => {
    const approve = async () => {
      const request = await agent.call('f.submit', {});
      return (await tm.confirmPending(request.confirmId, true)).data;
    };
    const unnamed = await approve();
    const box = form.querySelector('[type=checkbox]');
    box.checked = true;
    const parent = form.parentNode;
    form.remove();
    const removed = await approve();
    parent.append(form);
    const back = await approve();
    return { unnamed, removed, back, submits: submits.length };
  });
  const reason = 'The browser did not submit the form: it is not in the document, or a control without a name fails its constraints';
  assert.deepEqual(out.unnamed, { submitted: false, reason });
  assert.deepEqual(out.removed, { submitted: false, reason });
  assert.deepEqual(out.back, { submitted: true });
  assert.equal(out.submits, 1);
  assert.deepEqual(page.errors, []);
});

test('undo of a fill writes back the fields that fill wrote, and leaves what the person typed elsewhere since', async () => {
  await openLab(`<form aria-label="profile"><input name="email" value="old@example.com"><input name="name"><textarea name="bio"></textarea></form>`);
  const out = await page.evaluate(async () => {
    const id = crypto.randomUUID();
    await agent.call('f.fill', { email: 'new@example.com' }, { id });
    form.name.value = 'Ann';
    form.bio.value = 'Typed by the person';
    form.insertAdjacentHTML('beforeend', '<input name="phone" value="555">');
    const undone = await tm.undo(id);
    return { undone, values: Object.fromEntries(new FormData(form)) };
  });
  assert.deepEqual(out, {
    undone: { status: 'ok' },
    values: { email: 'old@example.com', name: 'Ann', bio: 'Typed by the person', phone: '555' },
  });
  assert.deepEqual(page.errors, []);
});

test("a select nobody touched is no change: one with no option selected by default (the browser picks the first), one on a placeholder \"\"", async () => {
  await openLab(`<form aria-label="order">
    <input name="note">
    <select name="country"><option value="fr">France</option><option value="de">Germany</option></select>
    <select name="size"><option value="" selected>Choose…</option><option value="m">M</option></select>
  </form>`);
  const out = await page.evaluate(async () => {
    await agent.call('f.fill', { note: 'hello' });
    const request = await agent.call('f.submit', {});
    await tm.confirmPending(request.confirmId, false);
    await agent.call('f.fill', { country: 'de', size: 'm' });
    return { first: request.changes, then: (await agent.call('f.submit', {})).changes };
  });
  assert.deepEqual(out.first, [{ path: 'note', after: 'hello' }]);
  assert.deepEqual(out.then, [
    { path: 'note', after: 'hello' },
    { path: 'country', before: 'fr', after: 'de' },
    { path: 'size', after: 'm' },
  ]);
  assert.deepEqual(page.errors, []);
});

test('a checkbox group is an array of the checked values (read, fill, changes, schema), and a Rails checkbox after its hidden input is a boolean', async () => {
  await openLab(`<form aria-label="prefs">
    <input type="checkbox" name="tags" value="news"><input type="checkbox" name="tags" value="offers" checked><input type="checkbox" name="tags" value="events">
    <input type="hidden" name="agree" value="0"><input type="checkbox" name="agree" value="1">
  </form>`);
  const out = await page.evaluate(async () => {
    const schema = (await agent.describe('f.fill')).data.inputSchema.properties;
    const before = (await agent.call('f.read', {})).data;
    const fill = await agent.call('f.fill', { tags: ['news', 'events'], agree: true });
    const after = (await agent.call('f.read', {})).data;
    const request = await agent.call('f.submit', {});
    await tm.confirmPending(request.confirmId, true);
    return { schema, before, fill: fill.status, after, changes: request.changes, submitted: [...new FormData(form)], values: [...form.querySelectorAll('[name=tags]')].map((b) => b.value) };
  });
  assert.deepEqual(out.schema, {
    tags: { type: 'array', items: { enum: ['news', 'offers', 'events'] } },
    agree: { type: 'boolean' },
  });
  assert.deepEqual(out.before, { tags: ['offers'], agree: false });
  assert.equal(out.fill, 'ok');
  assert.deepEqual(out.after, { tags: ['news', 'events'], agree: true });
  assert.deepEqual(out.changes, [
    { path: 'tags', before: ['offers'], after: ['news', 'events'] },
    { path: 'agree', before: false, after: true },
  ]);
  assert.deepEqual(out.submitted, [['tags', 'news'], ['tags', 'events'], ['agree', '0'], ['agree', '1']]);
  assert.deepEqual(out.values, ['news', 'offers', 'events'], 'no box renamed');
  assert.deepEqual(page.errors, []);
});

test('a read-only field is read but not filled: not in the fill schema, and one made read-only later is left as it is', async () => {
  await openLab(`<form aria-label="invoice">
    <input name="account" value="ACC-1001" readonly>
    <input name="note">
    <input name="total" value="40">
  </form>`);
  const out = await page.evaluate(async () => {
    const schema = Object.keys((await agent.describe('f.fill')).data.inputSchema.properties);
    const refused = (await agent.call('f.fill', { account: 'ACC-6666' })).status;
    form.total.readOnly = true;
    const fill = await agent.call('f.fill', { note: 'thanks', total: '1' });
    const read = (await agent.call('f.read', {})).data;
    return { schema, refused, fill: fill.data, read, values: Object.fromEntries(new FormData(form)) };
  });
  assert.deepEqual(out, {
    schema: ['note', 'total'],
    refused: 'invalid',
    fill: { filled: ['note'] },
    read: { account: 'ACC-1001', note: 'thanks', total: '40' },
    values: { account: 'ACC-1001', note: 'thanks', total: '40' },
  });
  assert.deepEqual(page.errors, []);
});

test('a hidden input (Laravel\'s _token) is no agent\'s to read or fill: redacted in read, not in the fill schema, and still submitted', async () => {
  await openLab(`<form aria-label="profile">
    <input type="hidden" name="_token" value="csrf-secret">
    <input name="email">
    <input type="hidden" name="agree" value="0"><input type="checkbox" name="agree" value="1">
  </form>`);
  const out = await page.evaluate(async () => {
    const schema = Object.keys((await agent.describe('f.fill')).data.inputSchema.properties);
    const refused = (await agent.call('f.fill', { _token: 'forged' })).status;
    const fill = await agent.call('f.fill', { email: 'a@b.example', agree: true });
    const read = (await agent.call('f.read', {})).data;
    form._token.value = 'rotated by the page';
    const asked = await agent.call('f.submit', {});
    return { schema, refused, fill: fill.data, read, asked, values: Object.fromEntries(new FormData(form)) };
  });
  assert.deepEqual(out.schema, ['email', 'agree']);
  assert.equal(out.refused, 'invalid');
  assert.deepEqual(out.fill, { filled: ['email', 'agree'] });
  assert.deepEqual(out.read, { _token: '[redacted]', email: 'a@b.example', agree: true });
  assert.equal(out.asked.status, 'needs_confirmation');
  assert.equal(JSON.stringify(out.asked).includes('rotated') || JSON.stringify(out.asked).includes('csrf-secret'), false);
  assert.deepEqual(out.values, { _token: 'rotated by the page', email: 'a@b.example', agree: '1' });
  assert.deepEqual(page.errors, []);
});

test('fill names the fields that did not take their value (a date in another format, a range clamped), and lists only those that did as filled', async () => {
  await openLab(`<form aria-label="booking">
    <input name="note"><input name="when" type="date"><input name="guests" type="range" min="1" max="10">
  </form>`);
  const out = await page.evaluate(async () => {
    const fill = await agent.call('f.fill', { note: 'window seat', when: '03/14/2025', guests: 80 });
    const good = await agent.call('f.fill', { when: '2025-03-14', guests: 4 });
    return { fill: fill.data, good: good.data, values: Object.fromEntries(new FormData(form)) };
  });
  const message = 'The field did not take this value: the browser or the page changed it';
  assert.deepEqual(out, {
    fill: { filled: ['note'], invalid: [{ path: 'when', message }, { path: 'guests', message }] },
    good: { filled: ['when', 'guests'] },
    values: { note: 'window seat', when: '2025-03-14', guests: '4' },
  });
  assert.deepEqual(page.errors, []);
});

test('inputs sharing a name (to[]) are one list: read as every value, filled item by item, shown as a change of the list', async () => {
  await openLab(`<form aria-label="mail"><input name="to[]" type="email" value="ann@example.com"><input name="to[]" type="email"></form>`);
  const out = await page.evaluate(async () => {
    const schema = (await agent.describe('f.fill')).data.inputSchema.properties;
    const before = (await agent.call('f.read', {})).data;
    const fill = (await agent.call('f.fill', { 'to[]': ['ann@example.com', 'bo@example.com'] })).data;
    const request = await agent.call('f.submit', {});
    return { schema, before, fill, changes: request.changes, values: new FormData(form).getAll('to[]') };
  });
  assert.deepEqual(out, {
    schema: { 'to[]': { type: 'array', items: { type: 'string' }, maxItems: 2 } },
    before: { 'to[]': ['ann@example.com', ''] },
    fill: { filled: ['to[]'] },
    changes: [{ path: 'to[]', before: ['ann@example.com', ''], after: ['ann@example.com', 'bo@example.com'] }],
    values: ['ann@example.com', 'bo@example.com'],
  });
  assert.deepEqual(page.errors, []);
});

test('stale: the unchanged form is submitted on approval, with the values approved', async () => {
  await openLab(TRANSFER);
  const out = await page.evaluate(async () => {
    await agent.call('f.fill', { to: 'alice@example.com', amount: 100, memo: 'March rent' });
    const request = await agent.call('f.submit', {});
    // Writing the same values again is no change.
    await agent.call('f.fill', { amount: 100 });
    const final = await tm.confirmPending(request.confirmId, true);
    return { request, final, submits };
  });
  assert.deepEqual(out.request.changes, [
    { path: 'to', after: 'alice@example.com' },
    { path: 'amount', after: 100 },
    { path: 'memo', after: 'March rent' },
  ]);
  assert.deepEqual(out.final, { status: 'ok', data: { submitted: true } });
  assert.deepEqual(out.submits, [{ to: 'alice@example.com', amount: '100', memo: 'March rent', account: 'checking' }]);
});

test('sensitive: a password and a cc-number field rendered after formTools() are redacted in needs_confirmation', async () => {
  await openLab('<form aria-label="checkout"><input name="email" type="email"></form>');
  const out = await page.evaluate(async () => {
    // The app renders the payment step later; the user types into it.
    form.insertAdjacentHTML('beforeend', '<input name="pin" type="password"><input name="cardno" autocomplete="billing cc-number">');
    form.pin.value = 'hunter2';
    form.cardno.value = '4111111111111111';
    await agent.call('f.fill', { email: 'ann@example.com' });
    const request = await agent.call('f.submit', {});
    const read = await agent.call('f.read', {});
    return { request, read, pending: tm.pendingConfirmations(), sent: JSON.stringify(sent) };
  });
  assert.equal(out.request.status, 'needs_confirmation');
  assert.deepEqual(out.request.changes, [
    { path: 'email', after: 'ann@example.com' },
    { path: 'pin', after: '[redacted]' },
    { path: 'cardno', after: '[redacted]' },
  ]);
  assert.deepEqual(out.pending[0].changes, out.request.changes);
  assert.deepEqual(out.read.data, { email: 'ann@example.com', pin: '[redacted]', cardno: '[redacted]' });
  for (const secret of ['hunter2', '4111111111111111']) assert.ok(!out.sent.includes(secret), `${secret} never sent`);
});

test('sensitive: a password field switched to type="text" by a show-password button stays redacted', async () => {
  await openLab(`<form aria-label="login">
    <input name="user"><input name="password" type="password">
    <button type="button" id="show">Show</button>
  </form>`);
  const out = await page.evaluate(async () => {
    document.getElementById('show').addEventListener('click', () => {
      form.password.type = form.password.type === 'password' ? 'text' : 'password';
    });
    await agent.call('f.fill', { user: 'ann', password: 'hunter2' });
    document.getElementById('show').click();
    const type = form.password.type;
    const read = await agent.call('f.read', {});
    const request = await agent.call('f.submit', {});
    return { type, read, request, sent: JSON.stringify(sent) };
  });
  assert.equal(out.type, 'text');
  assert.deepEqual(out.read.data, { user: 'ann', password: '[redacted]' });
  assert.deepEqual(out.request.changes, [
    { path: 'user', after: 'ann' },
    { path: 'password', after: '[redacted]' },
  ]);
  assert.ok(!out.sent.includes('hunter2'), 'the password is never sent');
});

test('sensitive: a password rendered after formTools() and shown as text before any tool ran stays redacted', async () => {
  await openLab('<form aria-label="signup"><input name="user"></form>');
  const out = await page.evaluate(async () => {
    form.insertAdjacentHTML('beforeend', '<input name="secret" type="password">');
    form.secret.value = 'hunter2';
    form.secret.type = 'text';
    // In the same task, and again after the observer's microtask.
    const now = await agent.call('f.read', {});
    await new Promise((r) => setTimeout(r, 0));
    const later = await agent.call('f.read', {});
    const request = await agent.call('f.submit', {});
    return { now, later, request, sent: JSON.stringify(sent) };
  });
  assert.deepEqual(out.now.data, { secret: '[redacted]' });
  assert.deepEqual(out.later.data, { secret: '[redacted]' });
  assert.deepEqual(out.request.changes, [{ path: 'secret', after: '[redacted]' }]);
  assert.ok(!out.sent.includes('hunter2'), 'the password is never sent');
});

test('sensitive: a password rendered after formTools() and replaced by a text input of the same name before any tool ran stays redacted', async () => {
  await openLab('<form aria-label="signup"><input name="user"><div id="step"></div></form>');
  const out = await page.evaluate(async () => {
    const step = document.getElementById('step');
    // The app renders a password, then re-renders the step with a plain
    // text input of the same name (replaced, not re-typed), inside a wrapper.
    step.innerHTML = '<input name="secret" type="password"><label><input name="pin" autocomplete="cc-csc"></label>';
    const wrapped = document.createElement('span');
    wrapped.innerHTML = '<input name="secret"><input name="pin">';
    step.replaceChildren(wrapped);
    form.secret.value = 'hunter2';
    // Not digits or hex alone: a confirmId or an expiresAt could contain those.
    form.pin.value = 'zq-987';
    // In the same task (the records are taken at the read), and again after the observer's microtask.
    const now = await agent.call('f.read', {});
    await new Promise((r) => setTimeout(r, 0));
    const later = await agent.call('f.read', {});
    const request = await agent.call('f.submit', {});
    return { now, later, request, pending: tm.pendingConfirmations(), types: [...form.querySelectorAll('input')].map((i) => i.type), sent: JSON.stringify(sent) };
  });
  assert.deepEqual(out.types, ['text', 'text', 'text']);
  assert.deepEqual(out.now.data, { secret: '[redacted]', pin: '[redacted]' });
  assert.deepEqual(out.later.data, { secret: '[redacted]', pin: '[redacted]' });
  assert.deepEqual(out.request.changes, [
    { path: 'secret', after: '[redacted]' },
    { path: 'pin', after: '[redacted]' },
  ]);
  assert.deepEqual(out.pending[0].changes, out.request.changes);
  for (const secret of ['hunter2', 'zq-987']) {
    assert.ok(!out.sent.includes(secret), `${secret} never sent`);
    assert.ok(!JSON.stringify(out.pending).includes(secret), `${secret} not pending in clear`);
  }
});

test('sensitive: a password outside the form joined to it by form="", rendered after formTools() and shown as text before any tool ran, stays redacted', async () => {
  await openLab('<form aria-label="login" id="login"><input name="user"></form><div id="later"></div>');
  const out = await page.evaluate(async () => {
    document.getElementById('later').innerHTML = '<input form="login" name="password" type="password"><input name="other" type="password">';
    const pw = document.querySelector('[name=password]');
    pw.value = 'hunter2';
    await new Promise((r) => setTimeout(r, 0));
    pw.type = 'text'; // the show-password button
    document.querySelector('[name=other]').type = 'text'; // another form's: not this one's
    await new Promise((r) => setTimeout(r, 0));
    const read = await agent.call('f.read', {});
    return { joined: [...form.elements].includes(pw), read: read.data, sent: JSON.stringify(sent) };
  });
  assert.equal(out.joined, true);
  assert.deepEqual(out.read, { password: '[redacted]' });
  assert.ok(!out.sent.includes('hunter2'), 'never sent');
  assert.deepEqual(page.errors, []);
});

test('sensitive: a declared path is redacted inside a parent value (card.number in a change at card)', async () => {
  await openLab(`<form aria-label="pay">
    <select name="codes" multiple><option value="1234">a</option><option value="9876">b</option><option value="open">c</option></select>
  </form>`, { sensitive: ['codes.0'] });
  const out = await page.evaluate(async () => {
    // A tool of the same page declaring `card.number`, whose change is the
    // whole card object.
    tm.scope('wallet').register({
      name: 'save',
      description: 'Saves the card.',
      hints: { consequential: true },
      inputSchema: { type: 'object' },
      sensitive: ['card.number'],
      changes: () => [{ path: 'card', before: { number: '4000000000000002', name: 'Ann' }, after: { number: '4111111111111111', name: 'Ann B' } }],
      run: () => ({ saved: true }),
    });
    await new Promise((r) => setTimeout(r, 0));
    const saved = await agent.call('wallet.save', {});
    // The form's value at `codes` is an array: `codes.0` is inside it.
    await agent.call('f.fill', { codes: ['1234', 'open'] });
    const submit = await agent.call('f.submit', {});
    const read = await agent.call('f.read', {});
    return { saved, submit, read, pending: tm.pendingConfirmations(), sent: JSON.stringify(sent) };
  });
  assert.equal(out.saved.status, 'needs_confirmation');
  assert.deepEqual(out.saved.changes, [
    { path: 'card', before: { number: '[redacted]', name: 'Ann' }, after: { number: '[redacted]', name: 'Ann B' } },
  ]);
  assert.deepEqual(out.pending[0].changes, out.saved.changes);
  assert.deepEqual(out.submit.changes, [{ path: 'codes', before: [], after: ['[redacted]', 'open'] }]);
  assert.deepEqual(out.read.data, { codes: ['[redacted]', 'open'] });
  for (const secret of ['4000000000000002', '4111111111111111', '1234']) assert.ok(!out.sent.includes(secret), `${secret} never sent`);
});

test('required fields: minLength 1 in the fill schema; a submit of the form failing its constraints submits nothing and names the fields', async () => {
  await openForm();
  const out = await page.evaluate(async () => {
    const { formTools } = await import('/pkg/index.js');
    const required = document.createElement('form');
    required.setAttribute('aria-label', 'account');
    required.innerHTML = '<input name="user" required><input name="secret" type="password" required pattern=".{8,}"><input name="note">';
    const sent = [];
    required.addEventListener('submit', (event) => {
      event.preventDefault();
      sent.push(Object.fromEntries(new FormData(required)));
    });
    document.body.append(required);
    formTools(required, { scope: tm.scope('account') });
    const described = await agent.describe('account.fill');
    const empty = await tm.call('account.submit', {}, { caller: 'human' });
    required.elements.user.value = 'ann';
    required.elements.secret.value = 'short'; // (minlength would not apply: only to values a person typed)
    const short = await tm.call('account.submit', {}, { caller: 'human' });
    const emptyFill = await agent.call('account.fill', { user: '' });
    required.elements.user.value = 'ann';
    required.elements.secret.value = 'long enough';
    const valid = await tm.call('account.submit', {}, { caller: 'human' });
    return { properties: described.data.inputSchema.properties, empty, short, emptyFill, valid, sent };
  });
  assert.deepEqual(out.properties, {
    user: { type: 'string', minLength: 1 },
    secret: { type: 'string', minLength: 1 },
    note: { type: 'string' },
  });
  assert.equal(out.empty.status, 'ok');
  assert.equal(out.empty.data.submitted, false);
  assert.deepEqual(out.empty.data.invalid.map((issue) => issue.path), ['user', 'secret']);
  assert.ok(out.empty.data.invalid.every((issue) => typeof issue.message === 'string' && issue.message.length > 0));
  assert.deepEqual(out.short.data.invalid.map((issue) => issue.path), ['secret']);
  assert.equal(out.emptyFill.status, 'invalid', 'a required field cannot be filled empty');
  assert.deepEqual(out.emptyFill.issues.map((issue) => issue.path), ['user']);
  assert.deepEqual(out.valid, { status: 'ok', data: { submitted: true } });
  assert.deepEqual(out.sent, [{ user: 'ann', secret: 'long enough', note: '' }], 'only the valid form was submitted');
  assert.deepEqual(page.errors, []);
});
