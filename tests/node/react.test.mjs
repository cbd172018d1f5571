// usePendingConfirmations in a real React 19 page in headless Chromium: the
// list follows the registry live, and its approve / reject settle confirmations.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT, chromiumWithServer } from './support/browser.mjs';

const out = mkdtempSync(join(tmpdir(), 'toolmark-react-'));

before(async () => {
  await build({
    entryPoints: { app: join(REPO_ROOT, 'tests/browser/react-app.js'), form: join(REPO_ROOT, 'tests/browser/react-form-app.js') },
    bundle: true,
    format: 'esm',
    outdir: out,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  // esbuild's one line for the package: its modules beside the bundle.
  const parts = join(REPO_ROOT, 'pkg', 'wasm');
  for (const file of readdirSync(parts)) if (file.endsWith('.wasm')) copyFileSync(join(parts, file), join(out, file));
});
const chromium = chromiumWithServer({
  root: out,
  pages: {
    '/': '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/app.js"></script>',
    '/form': '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/form.js"></script>',
  },
});

after(() => rmSync(out, { recursive: true, force: true }));

test('the pending list is live, and approve / reject settle confirmations', async () => {
  const page = await chromium.open('/');
  await page.waitForFunction(() => window.agent && window.agent.clientId !== undefined);
  assert.equal(await page.textContent('#count'), '0 pending');

  await page.evaluate(() => Promise.all([window.agent.call('pay', { amount: 5 }), window.agent.call('pay', { amount: 7 })]));
  await page.waitForFunction(() => document.querySelector('#count').textContent === '2 pending');
  assert.deepEqual(await page.$$eval('.summary', (els) => els.map((e) => e.textContent)), ['Pay 5 EUR', 'Pay 7 EUR']);

  await page.click('li:nth-child(1) .approve');
  await page.waitForFunction(() => document.querySelector('#count').textContent === '1 pending');
  await page.waitForFunction(() => document.querySelector('#last').textContent !== '');
  assert.deepEqual(JSON.parse(await page.textContent('#last')), { status: 'ok', data: { paid: 5 } });

  await page.click('li:nth-child(1) .reject');
  await page.waitForFunction(() => document.querySelector('#count').textContent === '0 pending');
  await page.waitForFunction(() => window.confirmed.length === 2);
  assert.deepEqual(await page.evaluate(() => window.confirmed), [
    { status: 'ok', data: { paid: 5 } },
    { status: 'cancelled', by: 'operator' },
  ]);
  assert.deepEqual(page.errors, []);
});

test("formTools' fill reaches a React form's controlled inputs: the app submits what fill wrote, and undo puts React's state back", async () => {
  const page = await chromium.open('/form');
  await page.waitForFunction(() => window.agent && window.agent.clientId !== undefined);
  const out = await page.evaluate(async () => {
    const id = crypto.randomUUID();
    const fill = await window.agent.call('f.fill', { email: 'ann@example.com', agree: true, plan: 'pro', size: 'm' }, { id });
    const form = document.getElementById('signup');
    await new Promise((r) => setTimeout(r, 0));
    form.requestSubmit();
    const undone = await window.tm.undo(id);
    await new Promise((r) => setTimeout(r, 0));
    form.requestSubmit();
    return { fill, undone, submitted: window.submitted };
  });
  assert.deepEqual(out.fill, { status: 'ok', data: { filled: ['email', 'agree', 'plan', 'size'] } });
  assert.deepEqual(out.undone, { status: 'ok' });
  assert.deepEqual(out.submitted, [
    { email: 'ann@example.com', agree: true, plan: 'pro', size: 'm' },
    { email: '', agree: false, plan: 'free', size: 's' },
  ]);
  assert.deepEqual(page.errors, []);
});
