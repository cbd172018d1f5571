// `pattern` in real headless Chromium through the built package: a
// catastrophic-backtracking pattern (`^(a+)+$`) against a hostile input is
// answered `invalid` (regex-lite runs it; the page's RegExp would backtrack
// 2^40 times), and the patterns regex-lite cannot express still run through
// RegExp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();

/** Calls a tool whose input `s` has `pattern`, once per text, in a fresh page. */
async function callWith(pattern, texts) {
  const page = await chromium.open();
  const results = await page.evaluate(
    async ({ pattern, texts }) => {
      const { createToolmark } = await import('/pkg/index.js');
      const tm = createToolmark();
      tm.register({
        name: 'echo',
        description: 'Echo.',
        inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] },
        run: (input) => input.s.length,
      });
      const results = [];
      for (const s of texts) results.push(await tm.call('echo', { s }, { caller: 'human' }));
      return results;
    },
    { pattern, texts },
  );
  assert.deepEqual(page.errors, []);
  await page.close();
  return results;
}

// Without the linear engine this call blocks the page's main thread for
// hours (2^40 backtracking steps); the timeout turns that into a failure.
test('^(a+)+$ against 40 a and a "!" is answered invalid', { timeout: 60_000 }, async () => {
  const hostile = `${'a'.repeat(40)}!`;
  const [invalid, valid] = await callWith('^(a+)+$', [hostile, 'a'.repeat(40)]);
  assert.deepEqual(invalid, {
    status: 'invalid',
    issues: [{ path: 's', message: 'must match pattern "^(a+)+$"' }],
  });
  assert.deepEqual(valid, { status: 'ok', data: 40 });
});

test('patterns regex-lite cannot express still run through RegExp', { timeout: 60_000 }, async () => {
  // Lookahead, a backreference and a Unicode property escape.
  const [ok, bad] = await callWith('^(?=.*\\d)(\\p{L})\\1\\w*$', ['ÉÉ1', 'ÉÉx']);
  assert.deepEqual(ok, { status: 'ok', data: 3 });
  assert.equal(bad.status, 'invalid');
});
