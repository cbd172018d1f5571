// `pattern` in real headless Chromium through the built package: no pattern
// runs in the page's backtracking RegExp. A catastrophic-backtracking
// pattern the linear-time engine takes (`^(a+)+$`) and the issue's unanchored lookahead
// run, and `^(\p{L}+\s?)+$` (its property from the page's own RegExp), are
// answered at once on hostile inputs; a pattern without a linear-time plan
// (here an unknown property) is refused at registration: thrown in dev
// mode, else a `schema_conversion_failed` event and every call answered
// invalid, naming the pattern. The test timeouts are
// hang guards only (the page's RegExp took minutes on these inputs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();

/**
 * In a fresh page: registers a tool whose input `s` has `pattern` (with
 * `dev`), then calls it once per text. Returns what registration threw
 * (`{ code }`) or the error events, and the results.
 */
async function callWith(pattern, texts, { dev = false } = {}) {
  const page = await chromium.open();
  const outcome = await page.evaluate(
    async ({ pattern, texts, dev }) => {
      const { createToolmark } = await import('/pkg/index.js');
      const events = [];
      const tm = createToolmark({ dev, onError: (e) => events.push({ code: e.code, message: e.message }) });
      try {
        tm.register({
          name: 'echo',
          description: 'Echo.',
          inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] },
          run: (input) => input.s.length,
        });
      } catch (e) {
        return { thrown: { name: e.name, code: e.code, message: e.message } };
      }
      const results = [];
      for (const s of texts) results.push(await tm.call('echo', { s }, { caller: 'human' }));
      return { events, results };
    },
    { pattern, texts, dev },
  );
  assert.deepEqual(page.errors, []);
  await page.close();
  return outcome;
}

// Without the linear engine this call blocks the page's main thread for
// hours (2^40 backtracking steps); the timeout turns that into a failure.
test('^(a+)+$ against 40 a and a "!" is answered invalid', { timeout: 60_000 }, async () => {
  const hostile = `${'a'.repeat(40)}!`;
  const { results } = await callWith('^(a+)+$', [hostile, 'a'.repeat(40)]);
  assert.deepEqual(results, [
    { status: 'invalid', issues: [{ path: 's', message: 'must match pattern "^(a+)+$"' }] },
    { status: 'ok', data: 40 },
  ]);
});

const LETTERS = '^(\\p{L}+\\s?)+$';
const UNKNOWN = '^(\\p{Nope}+\\s?)+$';
const REFUSAL = `pattern "${UNKNOWN}" is refused: \\p{Nope} is not a Unicode property this host's RegExp knows (u flag)`;

// The page's RegExp ran this input 212 s in Node, doubling per character.
test('^(\\p{L}+\\s?)+$ is taken, and answers a hostile input at once', { timeout: 20_000 }, async () => {
  const hostile = `${'Éa'.repeat(20)}!`;
  const { events, results } = await callWith(LETTERS, [hostile, 'Élan Vital', 'Ωmega 𝒜'], { dev: true });
  assert.deepEqual(events, []);
  assert.deepEqual(results.map((r) => r.status), ['invalid', 'ok', 'ok']);
});

test('a pattern without a linear-time plan is refused at registration in dev mode', { timeout: 20_000 }, async () => {
  const { thrown } = await callWith(UNKNOWN, [], { dev: true });
  assert.equal(thrown.name, 'ToolmarkError');
  assert.equal(thrown.code, 'schema_conversion_failed');
  assert.ok(thrown.message.includes(REFUSAL), thrown.message);
});

test('a refused pattern answers every call invalid at once, the hostile one too', { timeout: 20_000 }, async () => {
  const hostile = `${'Éa'.repeat(20)}!`;
  const { events, results } = await callWith(UNKNOWN, [hostile, 'Élan Vital']);
  assert.deepEqual(events.map((e) => e.code), ['schema_conversion_failed']);
  assert.ok(events[0].message.includes(REFUSAL), events[0].message);
  const refused = {
    status: 'invalid',
    issues: [{ path: '', message: `the tool's input schema was refused at registration: ${REFUSAL}` }],
  };
  assert.deepEqual(results, [refused, refused]);
});

// The page's RegExp ran this input 40.7 s in Node (quadratic).
test('an unanchored lookahead run on 200,000 characters is answered at once', { timeout: 20_000 }, async () => {
  const pattern = '(?=.*[A-Z])(?=.*\\d)';
  const hostile = 'a'.repeat(200_000);
  const { events, results } = await callWith(pattern, [hostile, `${hostile}A1`, 'A\n1'], { dev: true });
  assert.deepEqual(events, []);
  assert.deepEqual(
    results.map((r) => r.status),
    ['invalid', 'ok', 'invalid'],
  );
});
