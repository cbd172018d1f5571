// The validator's worst cases in real headless Chromium, through the built
// package: an agent's call through the in-page channel, and validateMessage.
// Each answer is checked (capped issues with the rest counted, `ok` for valid
// inputs, the budget's issue past it); the timeout is a hang guard only (the
// figures are benches/validate-worst.mjs's). The same answers are asserted
// natively (src/schema/tests.rs, src/protocol/validation.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();
const HANG_GUARD = { timeout: 5_000 };

/** The summary of case `name` (support/hostile-validation-cases.mjs) run once in a fresh page. */
async function run(name) {
  const page = await chromium.open();
  const result = await page.evaluate(async (name) => {
    const { CASES, measure } = await import('/tests/node/support/hostile-validation-cases.mjs');
    const pkg = {
      ...(await import('/pkg/index.js')),
      ...(await import('/pkg/bridge/index.js')),
      ...(await import('/pkg/bridge/in-page.js')),
      ...(await import('/pkg/protocol/index.js')),
    };
    const kase = CASES.find((c) => c.name === name);
    return (await measure(pkg, kase, { warmup: 100 })).answer;
  }, name);
  assert.deepEqual(page.errors, []);
  await page.close();
  return result;
}

const BUDGET_MESSAGE = 'schema evaluation exceeded 1000000 steps';

test('validateMessage on a manifest of 10,000 {} tools returns 100 errors', HANG_GUARD, async () => {
  assert.deepEqual(await run('validateMessage: manifest of 10,000 {} tools (30 KB)'), {
    status: 'invalid',
    issues: 100,
    first: { path: 'tools.0.name', message: "must have required property 'name'" },
    last: { path: '', message: '39901 more issues not shown' },
  });
});

test('an enum of 600 names over a 1 MiB array of them is ok', HANG_GUARD, async () => {
  assert.deepEqual(await run('enum of 600 zone names, 1 MiB array of them'), {
    status: 'ok', issues: 0, first: undefined, last: undefined,
  });
});

test('an enum of 100 objects over a 200 KB array of them is ok', HANG_GUARD, async () => {
  assert.deepEqual(await run('enum of 100 objects, 200 KB array of them'), {
    status: 'ok', issues: 0, first: undefined, last: undefined,
  });
});

test('uniqueItems over 100 KB of distinct objects is ok', HANG_GUARD, async () => {
  assert.equal((await run('uniqueItems, 100 KB of distinct small objects')).status, 'ok');
});

test('an input whose value alone would spend the budget is refused at its root', HANG_GUARD, async () => {
  // Building the value is charged to the budget from a count of its items,
  // before it is built: 40,000 objects (120 KB), or 1 MiB of small objects
  // or numbers, is past it.
  for (const name of ['required × 40,000 {} (120 KB)', 'enum of 100 objects, 1 MiB array of them', 'uniqueItems, 1 MiB of distinct small objects', 'items {type: string}, 1 MiB of 0s (524k issues)']) {
    assert.deepEqual(await run(name), {
      status: 'invalid', issues: 1, first: { path: '', message: BUDGET_MESSAGE }, last: { path: '', message: BUDGET_MESSAGE },
    }, name);
  }
});

test('work past the budget is answered invalid with the budget issue', HANG_GUARD, async () => {
  // The issue is at the instance location where the budget ran out.
  for (const [name, path] of [['anyOf chain of 40 (2^40 paths)', ''], ['required list of 20,000 names × 1,000 {}', /^\d+$/]]) {
    const answer = await run(name);
    assert.equal(answer.status, 'invalid', name);
    assert.equal(answer.issues, 1, name);
    assert.equal(answer.last.message, BUDGET_MESSAGE, name);
    assert.match(answer.last.path, typeof path === 'string' ? /^$/ : path, name);
  }
});
