// The page's lifecycle as an agent can stress it: requests made before the
// page's first manifest (the README's in-page snippet does that), and a
// call still running when its bridge detaches while a bridge attached later
// receives the same id (rules 2 and 5 are the page's, not a bridge's).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { createToolmark } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';
import { deferred, flush, until } from './support/page-agent.mjs';

const pkg = new URL('../../pkg/', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The first ```js block after the README heading `heading`. */
function snippet(heading) {
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README has no section ${heading}`);
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `no js block under ${heading}`);
  return block[1];
}

/** `code` with each `@toolmark/bridge-wasm…` import pointed at the built package's file. */
function againstPkg(code) {
  const { exports } = JSON.parse(readFileSync(new URL('package.json', pkg), 'utf8'));
  return code.replace(/from '@toolmark\/bridge-wasm(\/[^']*)?'/g, (_, sub = '') => {
    const entry = exports[`.${sub}`];
    assert.ok(entry, `the package exports no ${sub || '.'}`);
    return `from '${new URL(entry.default, pkg).href}'`;
  });
}

describe('the in-page agent before the first manifest', () => {
  test("the README's in-page snippet works as written: a call in the same tick as tm.use is answered", async () => {
    const code = snippet('### In-page channel');
    assert.match(code, /tm\.use\(bridge\(\{ transport \}\)\);\nconst result = await agent\.call\(/, 'the snippet calls in the same tick');
    // What the snippet takes from the README's "Install and use": `tm`
    // (here with the tool it calls) and `bridge`.
    const module = [
      `import { createToolmark } from '@toolmark/bridge-wasm';`,
      `import { bridge } from '@toolmark/bridge-wasm/bridge';`,
      `const tm = createToolmark();`,
      `tm.scope('cart').register({ name: 'add', description: 'Adds an item', run: (input) => ({ added: input.sku }) });`,
      code,
      `export { result, agent };`,
    ].join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'toolmark-readme-'));
    try {
      const file = join(dir, 'in-page-snippet.mjs');
      writeFileSync(file, againstPkg(module));
      const { result, agent } = await import(pathToFileURL(file).href);
      assert.deepEqual(result, { status: 'ok', data: { added: 'A1' } });
      assert.equal(typeof agent.clientId, 'string');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('calls and describes made before the first manifest wait, then go out in order with its clientId', async () => {
    const tm = createToolmark();
    const order = [];
    tm.register({ name: 'note', description: 'Notes its input', run: (input) => order.push(input.n) });
    const { transport, agent } = createInPageChannel();
    const seen = [];
    transport.onMessage((m) => seen.push(m));
    const calls = [1, 2, 3].map((n) => agent.call('note', { n }));
    const described = agent.describe('note');
    await flush();
    assert.deepEqual(seen, [], 'nothing goes out before the page is known');
    tm.use(bridge({ transport }));
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((r) => r.status), ['ok', 'ok', 'ok']);
    assert.deepEqual(order, [1, 2, 3]);
    assert.equal((await described).data.name, 'note');
    assert.deepEqual(seen.map((m) => m.type), ['call', 'call', 'call', 'describe']);
    assert.ok(seen.every((m) => m.clientId === agent.clientId));
  });

  test('at most 100 requests wait; one more rejects at once with an error that says why, and the 100 still go out', async () => {
    const tm = createToolmark();
    let runs = 0;
    tm.register({ name: 'count', description: 'Counts', run: () => ++runs });
    const { transport, agent } = createInPageChannel();
    const waiting = [];
    for (let i = 0; i < 100; i++) waiting.push(agent.call('count', {}));
    await assert.rejects(agent.call('count', {}), /no manifest from the page yet.*100 requests already wait/);
    await assert.rejects(agent.describe('count'), /no manifest from the page yet/);
    tm.use(bridge({ transport }));
    // Every one answered (past 32 pending on the scope, refused busy: rule 5).
    const results = await Promise.all(waiting);
    const ok = results.filter((r) => r.status === 'ok').length;
    assert.equal(ok + results.filter((r) => r.code === 'busy').length, 100);
    assert.ok(ok >= 32);
    assert.equal(runs, ok);
  });

  test('a waiting request that times out is never sent; one cancelled resolves cancelled signal and is never sent', async () => {
    const tm = createToolmark();
    let runs = 0;
    tm.register({ name: 'count', description: 'Counts', run: () => ++runs });
    const { transport, agent } = createInPageChannel();
    const seen = [];
    transport.onMessage((m) => seen.push(m));
    await assert.rejects(agent.call('count', {}, { timeoutMs: 10 }), { name: 'TimeoutError' });
    const cancelled = agent.call('count', {}, { id: 'to-cancel', timeoutMs: 5000 });
    agent.cancel('to-cancel');
    assert.deepEqual(await cancelled, { status: 'cancelled', by: 'signal' });
    tm.use(bridge({ transport }));
    assert.deepEqual(await agent.call('count', {}), { status: 'ok', data: 1 });
    assert.equal(runs, 1);
    assert.deepEqual(seen.map((m) => m.type), ['call']);
  });
});

describe('exactly once across detach', () => {
  test('a call running when its bridge detaches keeps its id and its scope: the same id on a later bridge never runs it twice at once', async () => {
    const tm = createToolmark();
    let running = 0;
    let most = 0;
    const starts = [];
    tm.scope('slow').register({
      name: 'work',
      description: 'Works until released (ignores its signal)',
      run: async (input, { signal, callId }) => {
        const release = deferred();
        starts.push({ callId, signal, release });
        running += 1;
        most = Math.max(most, running);
        await release.promise;
        running -= 1;
        return input.n;
      },
    });
    const first = createInPageChannel();
    const detach = tm.use(bridge({ transport: first.transport }));
    await until(() => first.agent.clientId, 'first manifest');
    const answeredOnFirst = [];
    first.agent.onMessage((m) => m.type === 'result' && answeredOnFirst.push(m));
    void first.agent.call('slow.work', { n: 1 }, { id: 'call-1' });
    await until(() => starts.length === 1, 'the first run');
    detach();
    assert.equal(starts[0].signal.aborted, true, 'the detach aborts its running call');

    // Same page, a new channel: the same clientId.
    const second = createInPageChannel();
    tm.use(bridge({ transport: second.transport }));
    await until(() => second.agent.clientId, 'second manifest');
    assert.equal(second.agent.clientId, first.agent.clientId);
    const replay = second.agent.call('slow.work', { n: 2 }, { id: 'call-1', timeoutMs: 300 });
    const next = second.agent.call('slow.work', { n: 3 }, { id: 'call-2' });
    await flush(50);
    assert.equal(starts.length, 1, 'a second run started while the first still runs');
    await assert.rejects(replay, { name: 'TimeoutError' }, 'the duplicate id is ignored (rule 2)');

    starts[0].release.resolve();
    await until(() => starts.length === 2, 'the scope\'s next call');
    assert.equal(starts[1].callId, 'call-2');
    starts[1].release.resolve();
    assert.deepEqual(await next, { status: 'ok', data: 3 });
    assert.equal(most, 1, 'two runs at once in one scope');
    // Settled, the first call's id is the page's answered id: a replay is ignored.
    await assert.rejects(second.agent.call('slow.work', { n: 4 }, { id: 'call-1', timeoutMs: 300 }), { name: 'TimeoutError' });
    assert.equal(starts.length, 2, 'a replayed id ran again');
    assert.deepEqual(answeredOnFirst, [], 'nothing is sent on a detached bridge');
  });
});
