// The page's lifecycle as an agent can stress it: requests made before the
// page's first manifest (the README's in-page snippet does that), and a
// call still running when its bridge detaches while a bridge attached later
// receives the same id (rules 2 and 5 are the page's, not a bridge's).
// The in-page agent's scenarios (its own JS, no native counterpart) run in
// Node against pkg/ and in real headless Chromium on a page that imports
// pkg/, with the same checks on what it returns; the detach scenario runs in
// Node only, as the wiring of rules the native tests assert
// (tests/machine_rules/rule_2_exactly_once.rs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { createToolmark } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';
import { chromiumWithServer } from './support/browser.mjs';

const pkg = new URL('../../pkg/', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const { exports: pkgExports } = JSON.parse(readFileSync(new URL('package.json', pkg), 'utf8'));

/** The first ```js block after the README heading `heading`. */
function snippet(heading) {
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README has no section ${heading}`);
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `no js block under ${heading}`);
  return block[1];
}

/** The file the package exports as `@toolmark/bridge-wasm${sub}`, relative to pkg/. */
function exported(sub = '') {
  const entry = pkgExports[`.${sub}`];
  assert.ok(entry, `the package exports no ${sub || '.'}`);
  return typeof entry === 'string' ? entry : entry.default;
}

/**
 * The README's in-page snippet as a module, imports as written. What it takes
 * from the README's "Install and use": `tm` (here with the tool it calls) and `bridge`.
 */
function snippetModule() {
  const code = snippet('### In-page channel');
  assert.match(code, /tm\.use\(bridge\(\{ transport \}\)\);\nconst result = await agent\.call\(/, 'the snippet calls in the same tick');
  return [
    `import { createToolmark } from '@toolmark/bridge-wasm';`,
    `import { bridge } from '@toolmark/bridge-wasm/bridge';`,
    `const tm = createToolmark();`,
    `tm.scope('cart').register({ name: 'add', description: 'Adds an item', run: (input) => ({ added: input.sku }) });`,
    code,
    `export { result, agent };`,
  ].join('\n');
}

/** `code` with each `@toolmark/bridge-wasm…` import pointed at the built package's file (Node has no import map). */
function againstPkg(code) {
  return code.replace(/from '@toolmark\/bridge-wasm(\/[^']*)?'/g, (_, sub = '') => `from '${new URL(exported(sub), pkg).href}'`);
}

/** What the snippet module leaves: runs in Node and in the page. */
function snippetOutcome({ result, agent }) {
  return { result, clientIdType: typeof agent.clientId };
}

function checkSnippet(out) {
  assert.deepEqual(out.result, { status: 'ok', data: { added: 'A1' } });
  assert.equal(out.clientIdType, 'string');
}

// The scenarios below are written to run in Node and in the page: `m` holds the package's
// exports, `kit` the helpers of lifecycleKit(). Each returns what it saw, as
// plain data, for its check.

/** Waiting in macrotask turns (never sleeps), and a promise's outcome as data. */
function lifecycleKit() {
  // One macrotask turn: lets microtask-based channel delivery settle.
  const tick = typeof setImmediate === 'function'
    ? () => new Promise((resolve) => setImmediate(resolve))
    : () => new Promise((resolve) => setTimeout(resolve, 0));
  const flush = async (turns = 8) => {
    for (let i = 0; i < turns; i++) await tick();
  };
  const until = async (predicate, what = 'condition', turns = 5000) => {
    for (let i = 0; i < turns; i++) {
      const value = predicate();
      if (value) return value;
      await tick();
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const deferred = () => {
    let resolve;
    const promise = new Promise((res) => {
      resolve = res;
    });
    return { promise, resolve };
  };
  // `{ resolved }`, `{ rejected: String(error), name }`, or 'pending' when
  // unsettled after `guardMs` (a hang guard only: a request never answered
  // must fail its check, not hang the run).
  const outcome = (promise, guardMs = 5000) => {
    let timer;
    const hang = new Promise((resolve) => {
      timer = setTimeout(() => resolve('pending'), guardMs);
    });
    return Promise.race([
      Promise.resolve(promise).then(
        (value) => ({ resolved: value }),
        (error) => ({ rejected: String(error), name: error?.name }),
      ),
      hang,
    ]).finally(() => clearTimeout(timer));
  };
  return { tick, flush, until, deferred, outcome };
}

/** `got` is a rejection whose error, as a string, matches `pattern` (as assert.rejects has a RegExp). */
function rejectedMatching(got, pattern, message) {
  assert.equal(typeof got?.rejected, 'string', `${message ?? 'a rejection'}: ${JSON.stringify(got)}`);
  assert.match(got.rejected, pattern, message);
}

/** `got` is a rejection with an error named `name`. */
function rejectedNamed(got, name, message) {
  assert.equal(typeof got?.rejected, 'string', `${message ?? 'a rejection'}: ${JSON.stringify(got)}`);
  assert.equal(got.name, name, message);
}

async function requestsWaitInOrder(m, kit) {
  const tm = m.createToolmark();
  const order = [];
  tm.register({ name: 'note', description: 'Notes its input', run: (input) => order.push(input.n) });
  const { transport, agent } = m.createInPageChannel();
  const seen = [];
  transport.onMessage((message) => seen.push(message));
  const calls = [1, 2, 3].map((n) => agent.call('note', { n }));
  const described = agent.describe('note');
  await kit.flush();
  const seenBeforeUse = seen.slice();
  tm.use(m.bridge({ transport }));
  return {
    seenBeforeUse,
    results: await Promise.all(calls.map((call) => kit.outcome(call))),
    order,
    described: await kit.outcome(described),
    seenTypes: seen.map((message) => message.type),
    allWithClientId: seen.every((message) => message.clientId === agent.clientId),
  };
}

function checkRequestsWaitInOrder(out) {
  assert.deepEqual(out.seenBeforeUse, [], 'nothing goes out before the page is known');
  assert.deepEqual(out.results.map((r) => r.resolved?.status), ['ok', 'ok', 'ok'], JSON.stringify(out.results));
  assert.deepEqual(out.order, [1, 2, 3]);
  assert.equal(out.described.resolved?.data?.name, 'note', JSON.stringify(out.described));
  assert.deepEqual(out.seenTypes, ['call', 'call', 'call', 'describe']);
  assert.equal(out.allWithClientId, true);
}

async function hundredWait(m, kit) {
  const tm = m.createToolmark();
  let runs = 0;
  tm.register({ name: 'count', description: 'Counts', run: () => ++runs });
  const { transport, agent } = m.createInPageChannel();
  const waiting = [];
  for (let i = 0; i < 100; i++) waiting.push(agent.call('count', {}));
  const oneMore = await kit.outcome(agent.call('count', {}));
  const describeMore = await kit.outcome(agent.describe('count'));
  tm.use(m.bridge({ transport }));
  const results = (await Promise.all(waiting.map((call) => kit.outcome(call)))).map((r) => r.resolved ?? r);
  return { oneMore, describeMore, results, runs };
}

function checkHundredWait(out) {
  rejectedMatching(out.oneMore, /no manifest from the page yet.*100 requests already wait/);
  rejectedMatching(out.describeMore, /no manifest from the page yet/);
  // Every one answered (past 32 pending on the scope, refused busy: rule 5).
  const ok = out.results.filter((r) => r.status === 'ok').length;
  assert.equal(ok + out.results.filter((r) => r.code === 'busy').length, 100, JSON.stringify(out.results.slice(0, 3)));
  assert.ok(ok >= 32);
  assert.equal(out.runs, ok);
}

async function waitingTimeoutAndCancel(m, kit) {
  const tm = m.createToolmark();
  let runs = 0;
  tm.register({ name: 'count', description: 'Counts', run: () => ++runs });
  const { transport, agent } = m.createInPageChannel();
  const seen = [];
  transport.onMessage((message) => seen.push(message));
  const timedOut = await kit.outcome(agent.call('count', {}, { timeoutMs: 10 }));
  const cancelled = agent.call('count', {}, { id: 'to-cancel', timeoutMs: 5000 });
  agent.cancel('to-cancel');
  const cancelledOutcome = await kit.outcome(cancelled);
  tm.use(m.bridge({ transport }));
  const after = await kit.outcome(agent.call('count', {}));
  return { timedOut, cancelled: cancelledOutcome, after, runs, seenTypes: seen.map((message) => message.type) };
}

function checkWaitingTimeoutAndCancel(out) {
  rejectedNamed(out.timedOut, 'ToolmarkError');
  assert.deepEqual(out.cancelled, { resolved: { status: 'cancelled', by: 'signal' } });
  assert.deepEqual(out.after, { resolved: { status: 'ok', data: 1 } });
  assert.equal(out.runs, 1);
  assert.deepEqual(out.seenTypes, ['call']);
}

async function exactlyOnceAcrossDetach(m, kit) {
  const tm = m.createToolmark();
  let running = 0;
  let most = 0;
  const starts = [];
  tm.scope('slow').register({
    name: 'work',
    description: 'Works until released (ignores its signal)',
    run: async (input, { signal, callId }) => {
      const release = kit.deferred();
      starts.push({ callId, signal, release });
      running += 1;
      most = Math.max(most, running);
      await release.promise;
      running -= 1;
      return input.n;
    },
  });
  const out = {};
  const first = m.createInPageChannel();
  const detach = tm.use(m.bridge({ transport: first.transport }));
  await kit.until(() => first.agent.clientId, 'first manifest');
  const answeredOnFirst = [];
  first.agent.onMessage((message) => message.type === 'result' && answeredOnFirst.push(message));
  const onFirst = kit.outcome(first.agent.call('slow.work', { n: 1 }, { id: 'call-1' }));
  await kit.until(() => starts.length === 1, 'the first run');
  detach();
  out.abortedByDetach = starts[0].signal.aborted;
  out.onFirst = await onFirst;

  // Same page, a new channel: the same clientId.
  const second = m.createInPageChannel();
  tm.use(m.bridge({ transport: second.transport }));
  await kit.until(() => second.agent.clientId, 'second manifest');
  out.sameClientId = second.agent.clientId === first.agent.clientId;
  const replay = kit.outcome(second.agent.call('slow.work', { n: 2 }, { id: 'call-1', timeoutMs: 300 }));
  const next = kit.outcome(second.agent.call('slow.work', { n: 3 }, { id: 'call-2' }));
  await kit.flush(50);
  out.startsWhileFirstRuns = starts.length;
  out.replay = await replay;

  starts[0].release.resolve();
  await kit.until(() => starts.length >= 2, 'the scope\'s next call');
  out.nextCallId = starts[1].callId;
  starts[1].release.resolve();
  out.next = await next;
  out.most = most;
  // Settled, the first call's id is the page's answered id: a replay is ignored.
  out.replayAfterSettled = await kit.outcome(second.agent.call('slow.work', { n: 4 }, { id: 'call-1', timeoutMs: 300 }));
  out.startsAtEnd = starts.length;
  out.answeredOnFirst = answeredOnFirst;
  // Nothing left running, whatever happened.
  for (const start of starts) start.release.resolve();
  return out;
}

function checkExactlyOnceAcrossDetach(out) {
  assert.equal(out.abortedByDetach, true, 'the detach aborts its running call');
  rejectedMatching(out.onFirst, /^ToolmarkError: createInPageChannel: the page end is closed/, 'the first channel closed under its call');
  assert.equal(out.sameClientId, true);
  assert.equal(out.startsWhileFirstRuns, 1, 'a second run started while the first still runs');
  rejectedNamed(out.replay, 'ToolmarkError', 'the duplicate id is ignored (rule 2)');
  assert.equal(out.nextCallId, 'call-2');
  assert.deepEqual(out.next, { resolved: { status: 'ok', data: 3 } });
  assert.equal(out.most, 1, 'two runs at once in one scope');
  rejectedNamed(out.replayAfterSettled, 'ToolmarkError');
  assert.equal(out.startsAtEnd, 2, 'a replayed id ran again');
  assert.deepEqual(out.answeredOnFirst, [], 'nothing is sent on a detached bridge');
}

const SCENARIOS = {
  'calls and describes made before the first manifest wait, then go out in order with its clientId': [requestsWaitInOrder, checkRequestsWaitInOrder],
  'at most 100 requests wait; one more rejects at once with an error that says why, and the 100 still go out': [hundredWait, checkHundredWait],
  'a waiting request that times out is never sent; one cancelled resolves cancelled signal and is never sent': [waitingTimeoutAndCancel, checkWaitingTimeoutAndCancel],
};
const DETACH = 'a call running when its bridge detaches keeps its id and its scope: the same id on a later bridge never runs it twice at once';

const README_TEST = "the README's in-page snippet works as written: a call in the same tick as tm.use is answered";

describe('Node: the in-page agent before the first manifest', () => {
  const m = { createToolmark, bridge, createInPageChannel };

  test(README_TEST, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolmark-readme-'));
    try {
      const file = join(dir, 'in-page-snippet.mjs');
      writeFileSync(file, againstPkg(snippetModule()));
      checkSnippet(snippetOutcome(await import(pathToFileURL(file).href)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [name, [scenario, check]] of Object.entries(SCENARIOS)) {
    test(name, async () => check(await scenario(m, lifecycleKit())));
  }
});

describe('Node: exactly once across detach', () => {
  test(DETACH, async () => {
    const m = { createToolmark, bridge, createInPageChannel };
    checkExactlyOnceAcrossDetach(await exactlyOnceAcrossDetach(m, lifecycleKit()));
  });
});

// The page imports the package's entries; the snippet's page resolves its
// bare `@toolmark/bridge-wasm…` imports through an import map of the
// package's exports, so the snippet runs unchanged.
const LIFECYCLE_PAGE = `<!doctype html>
<meta charset="utf-8">
<title>lifecycle</title>
<script type="module">
  const [{ createToolmark }, { bridge }, { createInPageChannel }] = await Promise.all(
    ['/pkg/index.js', '/pkg/bridge/index.js', '/pkg/bridge/in-page.js'].map((entry) => import(entry)),
  );
  window.m = { createToolmark, bridge, createInPageChannel };
  window.ready = true;
</script>`;

function snippetPage() {
  const imports = {};
  for (const key of Object.keys(pkgExports)) {
    imports[`@toolmark/bridge-wasm${key.slice(1)}`] = new URL(exported(key.slice(1)), 'http://pkg.invalid/pkg/').pathname;
  }
  return `<!doctype html>
<meta charset="utf-8">
<title>README in-page snippet</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module">
  window.snippet = import('/in-page-snippet.mjs').then(${snippetOutcome.toString()}, (error) => ({ error: String(error) }));
</script>`;
}

describe('Chromium: the page lifecycle', () => {
  const chromium = chromiumWithServer({
    pages: () => ({
      '/lifecycle.html': LIFECYCLE_PAGE,
      '/snippet.html': snippetPage(),
      '/in-page-snippet.mjs': { type: 'text/javascript; charset=utf-8', body: snippetModule() },
    }),
  });

  /** Runs `scenario` in a fresh page and returns its summary; the page threw nothing. */
  async function inPage(scenario) {
    const page = await chromium.open('/lifecycle.html');
    await page.waitForFunction(() => window.ready === true);
    const out = await page.evaluate(`(${scenario.toString()})(window.m, (${lifecycleKit.toString()})())`);
    assert.deepEqual(page.errors.map(String), []);
    await page.close();
    return out;
  }

  test(README_TEST, async () => {
    const page = await chromium.open('/snippet.html');
    const out = await page.evaluate(() => window.snippet);
    assert.equal(out.error, undefined);
    checkSnippet(out);
    assert.deepEqual(page.errors.map(String), []);
    await page.close();
  });

  for (const [name, [scenario, check]] of Object.entries(SCENARIOS)) {
    test(name, async () => check(await inPage(scenario)));
  }
});
