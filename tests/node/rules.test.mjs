// The built package's wiring, per rule group of the bridge protocol v1 spec:
// that createToolmark and tm.use(bridge(...)) reach each of the core's rules
// (the rules themselves are proved against the core natively, in
// tests/machine_rules/ and the core's unit tests), and what only the JS side
// shows: JS values converted, ctx and its AbortSignal, Standard Schema,
// ToolmarkError, events to JS listeners, timers through the JS driver, the
// in-page channel's agent helpers, formTools and the path helpers. The test
// plays the agent over createInPageChannel() with raw protocol messages.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { ToolmarkError, createToolmark, flatten, formTools, getPath, llmName, newId, setPath } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';
import { validateMessage } from '../../pkg/protocol/index.js';
import {
  EXPIRED_MESSAGE,
  UUID_V4,
  deferred,
  fakeClock,
  flush,
  page,
  until,
  untilAborted,
} from './support/page-agent.mjs';
import { fakeForm, field } from './support/fake-form.mjs';

const echo = (name, extra = {}) => ({
  name,
  description: `Echo ${name}`,
  run: (input) => ({ echoed: input }),
  ...extra,
});

/** `hang`: runs until its call is aborted; `onSignal` gets the signal of each run. */
const hangTool = (onSignal) => ({
  name: 'hang',
  description: 'd',
  run: (_input, ctx) => {
    onSignal(ctx.signal);
    return untilAborted(ctx.signal);
  },
});

/** A ready page with one tool, `name`, that answers the count of its runs; `runs()` is that count. */
async function pageCounting(name) {
  const h = page();
  await h.ready();
  let count = 0;
  h.tm.register({ name, description: 'd', run: () => ++count });
  await until(() => h.lastManifest().tools.length === 1, 'tool');
  return { h, runs: () => count };
}

// ---------------------------------------------------------------------------
describe('manifest', () => {
  test('attach after registration lists the tools already registered', async () => {
    const h = page({ attach: false });
    h.tm.register(echo('early'));
    h.attach();
    await h.ready();
    assert.equal(h.manifests().length, 1);
    assert.deepEqual(
      h.lastManifest().tools.map((t) => t.name),
      ['early'],
    );
    assert.equal(h.lastManifest().rev, h.tm.rev);
    h.check();
  });

  test('register() and its unregister function each send a manifest with rev +1; the entries carry the definitions\' fields', async () => {
    const h = page();
    await h.ready();
    const rev0 = h.lastManifest().rev;
    const offs = [];
    const defs = [
      echo('zeta', { hints: { readOnly: true } }),
      echo('alpha', { title: 'Alpha (localized)', hints: { untrustedContent: true, readOnly: true } }),
      echo('Beta', { mode: 'stepwise' }),
    ];
    for (const [i, def] of defs.entries()) {
      offs.push(h.tm.register(def));
      await until(() => h.manifests().length === i + 2, `manifest ${i + 2}`);
      assert.equal(h.lastManifest().rev, rev0 + i + 1, 'rev +1 per registration');
      assert.equal(h.tm.rev, rev0 + i + 1);
    }
    const m = h.lastManifest();
    const byName = Object.fromEntries(m.tools.map((t) => [t.name, t]));
    assert.deepEqual(byName, {
      zeta: { name: 'zeta', llmName: 'zeta', description: 'Echo zeta', hints: { readOnly: true } },
      alpha: {
        name: 'alpha',
        llmName: 'alpha',
        title: 'Alpha (localized)',
        description: 'Echo alpha',
        hints: { untrustedContent: true, readOnly: true },
      },
      Beta: { name: 'Beta', llmName: 'Beta', description: 'Echo Beta', hints: {}, mode: 'stepwise' },
    });
    assert.deepEqual(m.tools, h.tm.manifest('inapp'), 'the manifest lists what inapp sees');

    // Unregistering is a change too: one manifest, rev +1.
    const before = h.manifests().length;
    offs[0]();
    await until(() => h.manifests().length === before + 1, 'manifest after unregister');
    assert.equal(h.lastManifest().rev, rev0 + defs.length + 1);
    assert.ok(!h.lastManifest().tools.some((t) => t.name === 'zeta'));
    offs[0](); // a second unregister is no change
    await flush();
    assert.equal(h.manifests().length, before + 1);
    assert.equal(h.tm.rev, rev0 + defs.length + 1);
    h.check();
  });

  test("bridge({ onChange: 'changed' }) sends the attach manifest, then `changed` with the new rev instead of a manifest", async () => {
    const h = page({ bridge: { onChange: 'changed' } });
    await h.ready();
    assert.equal(h.manifests().length, 1, 'manifest on attach');
    const rev0 = h.lastManifest().rev;
    h.tm.register(echo('one'));
    await until(() => h.changes().length === 1, 'changed');
    assert.deepEqual(h.changes()[0], { protocol: 1, type: 'changed', clientId: h.clientId, rev: rev0 + 1 });
    await flush();
    assert.equal(h.manifests().length, 1, 'no manifest after attach in changed mode');
    h.check();
  });

  test("tm.scope() and scope.scope() join names with '.'; s.dispose() removes their tools in a new revision; registering into it is scope_disposed", async () => {
    const h = page();
    await h.ready();
    const s = h.tm.scope('signup');
    s.register(echo('fill'));
    const step = s.scope('step');
    step.register(echo('next'));
    h.tm.register(echo('other'));
    await until(() => h.lastManifest().tools.length === 3, 'three tools');
    const m = h.lastManifest();
    assert.deepEqual(
      m.tools.map((t) => [t.name, t.llmName]),
      [
        ['other', 'other'],
        ['signup.fill', 'signup__fill'],
        ['signup.step.next', 'signup__step__next'],
      ],
    );
    assert.deepEqual(await h.callAndWait('signup.fill', { a: 1 }), { status: 'ok', data: { echoed: { a: 1 } } });

    const revBefore = h.lastManifest().rev;
    const count = h.manifests().length;
    s.dispose();
    await until(() => h.manifests().length > count, 'manifest after dispose');
    const after = h.lastManifest();
    assert.ok(after.rev > revBefore, 'dispose is a new revision');
    assert.equal(after.rev, h.tm.rev);
    assert.deepEqual(
      after.tools.map((t) => t.name),
      ['other'],
      'the scope and its descendants are gone',
    );
    // Registering into the disposed scope: scope_disposed, no revision.
    const revNow = h.tm.rev;
    const manifests = h.manifests().length;
    s.register(echo('again'));
    step.register(echo('again'));
    await flush();
    assert.equal(h.errorsOf('scope_disposed').length, 2);
    assert.equal(h.tm.rev, revNow);
    assert.equal(h.manifests().length, manifests);
    h.check();
  });

  test('llmName() gives the llmName the manifest carries, for a name past 64 characters too', async () => {
    const h = page();
    await h.ready();
    const long = `${'a'.repeat(40)}.${'b'.repeat(40)}`;
    h.tm.register(echo('a.b'));
    h.tm.register(echo(long));
    await until(() => h.lastManifest().tools.length === 2, 'two tools');
    for (const t of h.lastManifest().tools) assert.equal(llmName(t.name), t.llmName, t.name);
    assert.equal(llmName('a.b'), 'a__b');
    assert.equal(llmName(long).length, 64, 'truncated to 64 characters');
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('ids', () => {
  test('clientId, confirmId and newId() are random UUID v4, never from Math.random', async () => {
    const original = Math.random;
    let mathRandomCalls = 0;
    Math.random = () => {
      mathRandomCalls += 1;
      return original();
    };
    try {
      const pages = [page(), page()];
      for (const h of pages) {
        h.tm.register({ name: 'c', description: 'd', hints: { consequential: true }, run: () => 1 });
        await until(() => h.lastManifest()?.tools.length === 1, 'tool');
      }
      assert.notEqual(pages[0].clientId, pages[1].clientId, 'one clientId per page load');
      const confirmIds = [];
      for (let i = 0; i < 5; i++) confirmIds.push((await pages[0].callAndWait('c', {})).confirmId);
      const ids = Array.from({ length: 1000 }, () => newId());
      for (const id of [...pages.map((h) => h.clientId), ...confirmIds, ...ids]) assert.match(id, UUID_V4);
      assert.equal(new Set(ids).size, ids.length);
      assert.equal(new Set(confirmIds).size, confirmIds.length);
      assert.equal(mathRandomCalls, 0, 'never Math.random');
      for (const h of pages) h.check();
    } finally {
      Math.random = original;
    }
  });
});

// ---------------------------------------------------------------------------
describe('in-page channel agent helpers', () => {
  test('agent.clientId/rev/tools follow the latest manifest; agent.call, agent.describe, agent.onConfirmed', async () => {
    const h = page();
    h.tm.register(echo('e', { inputSchema: { type: 'object' } }));
    h.tm.register({ name: 'c', description: 'd', hints: { consequential: true }, run: () => 'done' });
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    assert.equal(h.agent.clientId, h.clientId);
    assert.equal(h.agent.rev, h.tm.rev);
    assert.deepEqual(h.agent.tools, h.lastManifest().tools);
    assert.deepEqual(await h.agent.call('e', { a: 1 }), { status: 'ok', data: { echoed: { a: 1 } } });
    const d = await h.agent.describe('e');
    assert.deepEqual(d.data.inputSchema, { type: 'object' });
    const confirmed = [];
    h.agent.onConfirmed((m) => confirmed.push(m));
    const r = await h.agent.call('c', {});
    await h.tm.confirmPending(r.confirmId, true);
    await until(() => confirmed.length === 1, 'onConfirmed');
    assert.deepEqual(confirmed[0].result, { status: 'ok', data: 'done' });
    assert.equal(confirmed[0].confirmId, r.confirmId);
    for (const m of h.inbound) assert.ok(validateMessage(m, 'toPage').ok, 'the agent helpers send valid messages');
    h.check();
  });

  test('agent.call sends an absent input as {} and a null input as null', async () => {
    const h = page();
    h.tm.register(echo('e'));
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    assert.deepEqual(await h.agent.call('e'), { status: 'ok', data: { echoed: {} } });
    assert.deepEqual(await h.agent.call('e', undefined), { status: 'ok', data: { echoed: {} } });
    assert.deepEqual(await h.agent.call('e', null), { status: 'ok', data: { echoed: null } });
    const inputs = h.inbound.filter((m) => m.type === 'call').map((m) => m.input);
    assert.deepEqual(inputs, [{}, {}, null]);
    h.check();
  });

  test('agent.call(tool, input, { id }) uses that id, so the caller can cancel the call', async () => {
    const h = page();
    let signal;
    h.tm.register(hangTool((value) => (signal = value)));
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = newId();
    const pending = h.agent.call('hang', {}, { id });
    await until(() => signal, 'run');
    assert.equal(h.inbound.find((m) => m.type === 'call').id, id);
    h.agent.cancel(id);
    assert.deepEqual(await pending, { status: 'cancelled', by: 'signal' });
    assert.equal(signal.aborted, true);
    // Without the option a fresh id is minted per call.
    h.tm.register(echo('e'));
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    await h.agent.call('e', {});
    await h.agent.call('e', {});
    const ids = h.inbound.filter((m) => m.type === 'call').map((m) => m.id);
    assert.equal(new Set(ids).size, 3);
    assert.match(ids[2], UUID_V4);
    h.check();
  });

  test("what agent.call resolves with, agent.tools and onConfirmed's message are the agent end's own: a listener changing the message it got changes none of them", async () => {
    const h = page();
    const heardConfirmed = [];
    h.agent.onMessage((m) => m.type === 'confirmed' && heardConfirmed.push(structuredClone(m.result)));
    h.agent.onMessage((m) => {
      if (m.type === 'manifest') m.tools.length = 0;
      if (m.type === 'result' && m.result.data) m.result.data.token = '[redacted]';
      if (m.type === 'confirmed') m.result.data = 'changed by a listener';
    });
    const confirmed = [];
    h.agent.onConfirmed((m) => confirmed.push(m));
    h.agent.onConfirmed((m) => { m.result.status = 'changed by a subscriber'; });
    h.tm.register({ name: 'secret', description: 'd', hints: { readOnly: true }, run: () => ({ token: 'abc' }) });
    h.tm.register({ name: 'del', description: 'd', hints: { destructive: true }, run: () => 'deleted' });
    await until(() => h.agent.rev === h.tm.rev, 'the last manifest');
    const tools = h.agent.tools.map((tool) => tool.name);
    const result = await h.agent.call('secret', {});
    const asked = await h.agent.call('del', {});
    await h.tm.confirmPending(asked.confirmId, true);
    await until(() => heardConfirmed.length === 1, 'confirmed');
    // The onConfirmed subscribers share one copy; the listeners get the message as the page sent it.
    assert.deepEqual({ tools, result, heardConfirmed, confirmed: confirmed[0].result }, {
      tools: ['del', 'secret'],
      result: { status: 'ok', data: { token: 'abc' } },
      heardConfirmed: [{ status: 'ok', data: 'deleted' }],
      confirmed: { status: 'changed by a subscriber', data: 'deleted' },
    });
  });

  test('what the page would drop is refused at once with invalid_argument and not sent: options that are no object, an id or tool name that is no non-empty string, a rev that is no whole number >= 0', async () => {
    const h = page();
    h.tm.register(echo('e'));
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const revRule = 'options.rev must be a registry revision, a whole number >= 0';
    const requests = [
      // A timeout given where the options go, say: not taken as none.
      [() => h.agent.call('e', {}, 5000), 'agent.call: options must be an object (got 5000)'],
      [() => h.agent.call('e', {}, 'x'), 'agent.call: options must be an object (got "x")'],
      [() => h.agent.call('e', {}, () => {}), 'agent.call: options must be an object (got () => {})'],
      [() => h.agent.describe('e', 5000), 'agent.describe: options must be an object (got 5000)'],
      [() => h.agent.call('e', {}, { id: 42 }), 'agent.call: options.id must be a non-empty string (got 42)'],
      [() => h.agent.call('e', {}, { id: '' }), 'agent.call: options.id must be a non-empty string (got "")'],
      [() => h.agent.call('e', {}, { id: null }), 'agent.call: options.id must be a non-empty string (got null)'],
      [() => h.agent.call(42, {}), 'agent.call: the tool name must be a non-empty string (got 42)'],
      [() => h.agent.call('', {}), 'agent.call: the tool name must be a non-empty string (got "")'],
      [() => h.agent.describe(42), 'agent.describe: the tool name must be a non-empty string (got 42)'],
      [() => h.agent.describe(''), 'agent.describe: the tool name must be a non-empty string (got "")'],
      [() => h.agent.call('e', {}, { rev: 1.5 }), `agent.call: ${revRule} (got 1.5)`],
      [() => h.agent.call('e', {}, { rev: -1 }), `agent.call: ${revRule} (got -1)`],
      [() => h.agent.call('e', {}, { rev: '3' }), `agent.call: ${revRule} (got "3")`],
      [() => h.agent.call('e', {}, { rev: Infinity }), `agent.call: ${revRule} (got Infinity)`],
      [() => h.agent.call('e', {}, { rev: null }), `agent.call: ${revRule} (got null)`],
      // Half a surrogate pair, which the page drops as malformed JSON.
      [() => h.agent.call('e\ud800', {}), 'agent.call: the tool name holds half a surrogate pair, which the page drops as malformed (got "e\\ud800")'],
      [() => h.agent.describe('\udc00e'), 'agent.describe: the tool name holds half a surrogate pair, which the page drops as malformed (got "\\udc00e")'],
      [() => h.agent.call('e', {}, { id: 'x\ud83c' }), 'agent.call: options.id holds half a surrogate pair, which the page drops as malformed (got "x\\ud83c")'],
      [() => h.agent.call('e', { text: 'half \ud83c' }), 'agent.call: the input is not JSON-copyable (a string holds half a surrogate pair, which the page drops as malformed)'],
      [() => h.agent.call('e', { ['\udc00']: 1 }), 'agent.call: the input is not JSON-copyable (a string holds half a surrogate pair, which the page drops as malformed)'],
    ];
    const outcomes = requests.map(() => 'pending');
    requests.forEach(([request], i) => request().then(
      (value) => { outcomes[i] = { resolved: value }; },
      (error) => { outcomes[i] = `${error.name} ${error.code}: ${error.message}`; },
    ));
    await flush();
    assert.deepEqual(outcomes, requests.map(([, message]) => `ToolmarkError invalid_argument: createInPageChannel: ${message}`));
    assert.deepEqual([h.inbound, h.errors], [[], []], 'nothing sent, nothing dropped');
    // The bounds themselves are taken: whole pairs, and a backslash before "ud800" as text.
    assert.deepEqual(await h.agent.call('e', { n: 1 }, { id: 'x', rev: 0 }), { status: 'ok', data: { echoed: { n: 1 } } });
    assert.deepEqual(await h.agent.call('e', { n: 2 }, null), { status: 'ok', data: { echoed: { n: 2 } } }, 'null: no options');
    assert.deepEqual(await h.agent.call('e', { t: '\ud83c\udf89 \\ud800' }, { id: 'y\ud83c\udf89' }), { status: 'ok', data: { echoed: { t: '\ud83c\udf89 \\ud800' } } });
    h.check();
  });

  test('a request with the id of one still waiting for its result is refused at once with invalid_argument; the first is answered', async () => {
    const h = page();
    const gate = deferred();
    h.tm.register({ name: 'slow', description: 'd', run: () => gate.promise });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const first = h.agent.call('slow', { n: 1 }, { id: 'dup' });
    let second = 'pending';
    h.agent.call('slow', { n: 2 }, { id: 'dup' }).then(
      (value) => { second = { resolved: value }; },
      (error) => { second = `${error.name} ${error.code}: ${error.message}`; },
    );
    await flush();
    assert.equal(second, 'ToolmarkError invalid_argument: createInPageChannel: agent.call: options.id "dup" is in use by a request waiting for its result');
    gate.resolve('done');
    assert.deepEqual(await first, { status: 'ok', data: 'done' });
    assert.deepEqual(h.inbound.map((m) => [m.type, m.id, m.input]), [['call', 'dup', { n: 1 }]]);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 1: other clientIds', () => {
  test('messages addressed to another clientId are ignored silently: nothing runs, nothing is sent, no event', async () => {
    const { h, runs } = await pageCounting('act');
    const sentBefore = h.sent.length;
    const other = newId();
    const messages = [
      { protocol: 1, type: 'call', clientId: other, id: newId(), tool: 'act', input: {} },
      { protocol: 1, type: 'bogus', clientId: other },
    ];
    for (const m of messages) h.send(m);
    await flush();
    assert.equal(runs(), 0);
    assert.equal(h.sent.length, sentBefore, 'nothing answered');
    assert.deepEqual(h.errors, [], 'no event');
    // The same call addressed to this page runs.
    assert.deepEqual(await h.callAndWait('act', {}), { status: 'ok', data: 1 });
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 2: answered exactly once, duplicate ids ignored', () => {
  test('a duplicate id still in flight is ignored (call or describe)', async () => {
    const h = page();
    await h.ready();
    const gate = deferred();
    let runs = 0;
    h.tm.register({
      name: 'slow',
      description: 'd',
      run: async () => {
        runs += 1;
        await gate.promise;
        return 'done';
      },
    });
    await until(() => h.lastManifest().tools.length === 1, 'tool');
    const id = h.call('slow', {});
    await until(() => runs === 1, 'run');
    h.call('slow', {}, { id });
    h.describe('slow', { id });
    await flush();
    assert.equal(h.results(id).length, 0);
    gate.resolve();
    assert.deepEqual(await h.result(id), { status: 'ok', data: 'done' });
    await flush();
    assert.equal(runs, 1, 'the tool ran once');
    assert.equal(h.results(id).length, 1);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 3: timeouts are the server side’s', () => {
  test('agent.call with timeoutMs rejects and sends cancel; the page answers cancelled signal, never timeout', async () => {
    const h = page();
    await h.ready();
    let signal;
    h.tm.register(hangTool((value) => (signal = value)));
    await until(() => h.lastManifest().tools.length === 1, 'tool');
    await assert.rejects(h.agent.call('hang', {}, { timeoutMs: 30 }), (error) => error.name === 'ToolmarkError' && error.code === 'timeout');
    const call = h.inbound.find((m) => m.type === 'call');
    const cancel = await until(() => h.inbound.find((m) => m.type === 'cancel'), 'cancel to reach the page');
    assert.equal(cancel.id, call.id, 'the agent sent cancel for the timed-out id');
    assert.equal(cancel.clientId, h.clientId);
    assert.ok(validateMessage(cancel, 'toPage').ok);
    const result = await h.result(call.id);
    assert.ok(signal.aborted, 'the page stopped the work');
    assert.deepEqual(result, { status: 'cancelled', by: 'signal' });
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 4: unsupported protocol', () => {
  test('protocol other than 1, string id, this clientId → error "unsupported protocol", once', async () => {
    const { h, runs } = await pageCounting('act');
    const id = newId();
    h.send({ protocol: 2, type: 'call', clientId: h.clientId, id, tool: 'act', input: {} });
    assert.deepEqual(await h.result(id), { status: 'error', message: 'unsupported protocol' });
    // Answered once: the same id again is a duplicate.
    h.call('act', {}, { id });
    await flush();
    assert.equal(h.results(id).length, 1);
    assert.equal(runs(), 0, 'nothing ran');
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 5: per-scope serialization', () => {
  test('calls on one scope run one at a time in FIFO order; other scopes run in parallel', async () => {
    const h = page();
    await h.ready();
    const log = [];
    const gates = new Map();
    const gated = (label) => async (input) => {
      log.push(`start ${label}:${input.n}`);
      const gate = deferred();
      gates.set(`${label}:${input.n}`, gate);
      await gate.promise;
      log.push(`end ${label}:${input.n}`);
      return input.n;
    };
    const a = h.tm.scope('a');
    a.register({ name: 'slow', description: 'd', run: gated('a.slow') });
    a.register({ name: 'fast', description: 'd', run: (input) => (log.push(`run a.fast:${input.n}`), input.n) });
    h.tm.scope('b').register({ name: 'slow', description: 'd', run: gated('b.slow') });
    await until(() => h.lastManifest().tools.length === 3, 'tools');

    const c1 = h.call('a.slow', { n: 1 });
    const c2 = h.call('a.fast', { n: 2 });
    const c3 = h.call('a.slow', { n: 3 });
    const c4 = h.call('b.slow', { n: 4 });
    await until(() => gates.has('a.slow:1') && gates.has('b.slow:4'), 'a.slow:1 and b.slow:4 started');
    await flush();
    assert.deepEqual(log.slice().sort(), ['start a.slow:1', 'start b.slow:4'], 'scope b runs beside scope a; a waits');
    gates.get('b.slow:4').resolve();
    assert.deepEqual(await h.result(c4), { status: 'ok', data: 4 });
    assert.equal(h.results(c1).length, 0, 'scope a is still busy with call 1');
    gates.get('a.slow:1').resolve();
    await until(() => gates.has('a.slow:3'), 'a.slow:3 started');
    await flush();
    assert.equal(h.results(c3).length, 0);
    gates.get('a.slow:3').resolve();
    await h.result(c3);
    assert.deepEqual(
      log.filter((l) => l.includes('a.')),
      ['start a.slow:1', 'end a.slow:1', 'run a.fast:2', 'start a.slow:3', 'end a.slow:3'],
      'FIFO, one at a time',
    );
    const order = h.results().map((m) => m.id);
    assert.deepEqual(order, [c4, c1, c2, c3]);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 6: stale and unknown_tool', () => {
  test('older rev + tool gone → stale with the current rev; unknown tool → unknown_tool with the current rev', async () => {
    const h = page();
    await h.ready();
    const off = h.tm.register(echo('gone'));
    await until(() => h.lastManifest().tools.length === 1, 'tool');
    const seenRev = h.lastManifest().rev;
    off();
    await until(() => h.lastManifest().rev === seenRev + 1, 'manifest');
    const current = h.tm.rev;

    const stale = await h.callAndWait('gone', {}, { rev: seenRev });
    assert.equal(stale.status, 'refused');
    assert.equal(stale.code, 'stale');
    assert.equal(stale.rev, current);
    assert.equal(typeof stale.message, 'string');

    const unknown = await h.callAndWait('never-was', {});
    assert.equal(unknown.status, 'refused');
    assert.equal(unknown.code, 'unknown_tool');
    assert.equal(unknown.rev, current);
    h.check();
  });

  test('a tool unregistered by a listener after the core ordered its next run: that call is refused stale, not run, not "Tool failed"', async () => {
    const h = page();
    await h.ready();
    const gate = deferred();
    let runs = 0;
    const off = h.tm.register({ name: 'flaky', description: 'd', run: () => { runs += 1; return gate.promise; } });
    // Events are handed out before actions: this runs between the core's
    // order to run the queued call and the driver's start of it.
    h.tm.events.on('error', (e) => { if (e.code === 'tool_threw') off(); });
    await until(() => h.lastManifest().tools.length === 1, 'tool');
    const seenRev = h.lastManifest().rev;
    const first = h.call('flaky', {});
    const second = h.call('flaky', {}, { rev: seenRev });
    await until(() => runs === 1, 'first run');
    await flush();
    gate.reject(new Error('boom'));
    assert.deepEqual(await h.result(first), { status: 'error', message: 'Tool failed' });
    assert.deepEqual(await h.result(second), {
      status: 'refused', code: 'stale', message: 'The tool is gone: use the latest manifest', rev: seenRev + 1,
    });
    assert.equal(runs, 1);
    assert.deepEqual(h.errorsOf('tool_threw').map((e) => e.message), ['Error: boom']);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 7 and deferred confirmation', () => {
  function confirmPage(t, toolmarkOptions = {}) {
    const h = page({ toolmark: toolmarkOptions });
    const runs = [];
    h.tm.register({
      name: 'send',
      title: 'Send the order',
      description: 'd',
      hints: { consequential: true },
      run: (input, ctx) => {
        runs.push({ input, caller: ctx.caller });
        return { sent: input.order ?? null };
      },
    });
    h.tm.register({
      name: 'profile',
      description: 'd',
      hints: { consequential: true },
      sensitive: ['password'],
      summary: (input) => `Save profile for ${input.email}`,
      changes: (input) => [
        { path: 'email', before: 'old@example.com', after: input.email },
        { path: 'password', after: input.password },
        { path: 'password', before: 'hunter1', after: input.password },
        { path: 'nickname' },
      ],
      run: (input, ctx) => {
        runs.push({ tool: 'profile', caller: ctx.caller });
        return 'saved';
      },
    });
    return { h, runs };
  }

  test('step 1: a consequential call answers needs_confirmation (confirmId; the title or summary(); changes(), redacted), listed by pendingConfirmations(); the tool does not run', async () => {
    const { h, runs } = confirmPage();
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const r1 = await h.callAndWait('send', { order: 7 });
    assert.equal(r1.status, 'needs_confirmation');
    assert.match(r1.confirmId, UUID_V4, 'confirmId minted as a UUID v4');
    assert.equal(r1.summary, 'Send the order', "the tool's title");
    const r3 = await h.callAndWait('profile', { email: 'new@example.com', password: 'hunter2' });
    assert.deepEqual(r3, {
      status: 'needs_confirmation',
      confirmId: r3.confirmId,
      summary: 'Save profile for new@example.com',
      changes: [
        { path: 'email', before: 'old@example.com', after: 'new@example.com' },
        { path: 'password', after: '[redacted]' },
        { path: 'password', before: '[redacted]', after: '[redacted]' },
        { path: 'nickname' },
      ],
    });
    assert.ok(!JSON.stringify(h.sent).includes('hunter'), 'sensitive values never leave the page');
    assert.deepEqual(runs, [], 'nothing ran');
    const pending = h.tm.pendingConfirmations();
    assert.deepEqual(
      pending.map((p) => [p.confirmId, p.tool, p.summary]),
      [
        [r1.confirmId, 'send', 'Send the order'],
        [r3.confirmId, 'profile', 'Save profile for new@example.com'],
      ],
    );
    assert.deepEqual(pending[1].changes, r3.changes);
    assert.equal(h.confirmeds().length, 0);
    h.check();
  });

  test('steps 2–3: confirmPending(id, true) runs the tool as caller human, resolves its outcome and sends confirmed after the result', async () => {
    const { h, runs } = confirmPage();
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const id = h.call('send', { order: 42 });
    const r = await h.result(id);
    const final = await h.tm.confirmPending(r.confirmId, true);
    assert.deepEqual(final, { status: 'ok', data: { sent: 42 } });
    assert.deepEqual(runs, [{ input: { order: 42 }, caller: 'human' }], 'the approved run is caller human');
    const confirmed = await until(() => h.confirmeds(r.confirmId)[0], 'confirmed');
    assert.deepEqual(confirmed, {
      protocol: 1,
      type: 'confirmed',
      clientId: h.clientId,
      confirmId: r.confirmId,
      result: { status: 'ok', data: { sent: 42 } },
    });
    assert.ok(h.sent.indexOf(confirmed) > h.sent.indexOf(h.results(id)[0]), 'confirmed after the result');
    assert.deepEqual(h.tm.pendingConfirmations(), []);
    h.check();
  });

  test('approval/rejection from a synchronous pending-list subscriber still sends result before confirmed', async () => {
    const { h } = confirmPage();
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    let approve = true;
    h.tm.subscribePending(() => {
      for (const p of h.tm.pendingConfirmations()) void h.tm.confirmPending(p.confirmId, approve);
    });
    const id1 = h.call('send', { order: 1 });
    const r1 = await h.result(id1);
    const c1 = await until(() => h.confirmeds(r1.confirmId)[0], 'confirmed 1');
    approve = false;
    const id2 = h.call('send', { order: 2 });
    const r2 = await h.result(id2);
    const c2 = await until(() => h.confirmeds(r2.confirmId)[0], 'confirmed 2');
    assert.equal(r1.status, 'needs_confirmation');
    assert.deepEqual(c1.result, { status: 'ok', data: { sent: 1 } });
    assert.deepEqual(c2.result, { status: 'cancelled', by: 'operator' });
    assert.ok(h.sent.indexOf(c1) > h.sent.indexOf(h.results(id1)[0]));
    assert.ok(h.sent.indexOf(c2) > h.sent.indexOf(h.results(id2)[0]));
    h.check();
  });

  test('expiry (confirmExpiryMs, fake clock) → confirmed refused confirmation_expired; approving later gets the same', async (t) => {
    const clock = fakeClock(t);
    const { h, runs } = confirmPage(t, { confirmExpiryMs: 1000, now: clock.now });
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const r = await h.callAndWait('send', { order: 1 });
    const [p] = h.tm.pendingConfirmations();
    assert.equal(p.expiresAt, clock.value + 1000);
    await clock.advance(999);
    assert.equal(h.confirmeds().length, 0, 'not expired before confirmExpiryMs');
    await clock.advance(2);
    const c = await until(() => h.confirmeds(r.confirmId)[0], 'expired confirmed');
    assert.deepEqual(c.result, { status: 'refused', code: 'confirmation_expired', message: EXPIRED_MESSAGE });
    assert.deepEqual(h.tm.pendingConfirmations(), []);
    assert.deepEqual(await h.tm.confirmPending(r.confirmId, true), {
      status: 'refused',
      code: 'confirmation_expired',
      message: EXPIRED_MESSAGE,
    });
    await flush();
    assert.deepEqual(runs, []);
    assert.equal(h.confirmeds().length, 1, 'one confirmed per confirmId');
    h.check();
  });

  test('approving after the expiry time, its timer not yet run, reads now() → refused confirmation_expired; the tool does not run', async (t) => {
    const clock = fakeClock(t);
    const h = page({ toolmark: { now: clock.now, confirmExpiryMs: 1000 } });
    let runs = 0;
    h.tm.register({ name: 'pay', description: 'd', hints: { consequential: true }, run: () => ++runs });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const r = await h.callAndWait('pay', {});
    // The clock moves on but the timer is late (throttled background tab, suspended laptop…).
    clock.value += 5000;
    const final = await h.tm.confirmPending(r.confirmId, true);
    await flush();
    assert.deepEqual(final, { status: 'refused', code: 'confirmation_expired', message: EXPIRED_MESSAGE });
    assert.equal(runs, 0);
    h.check();
  });

  test('confirmed is sent only for confirmations created by a bridge call', async () => {
    const { h, runs } = confirmPage();
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const local = await h.tm.call('send', { order: 3 }, { caller: 'inapp' });
    assert.equal(local.status, 'needs_confirmation');
    assert.deepEqual(await h.tm.confirmPending(local.confirmId, true), { status: 'ok', data: { sent: 3 } });
    await flush();
    assert.equal(h.confirmeds().length, 0);
    assert.deepEqual(runs, [{ input: { order: 3 }, caller: 'human' }]);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('rule 8: hostile input', () => {
  async function hostilePage(bridgeOptions = {}) {
    const h = page({ bridge: bridgeOptions });
    const runs = [];
    h.tm.register({ name: 'act', description: 'd', run: (input) => (runs.push(input), 'ran') });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    return { h, runs };
  }

  /** Sends each value; each must be dropped with exactly one invalid_message and never answered. */
  async function expectDropped(h, runs, values) {
    for (const [i, value] of values.entries()) {
      const sentBefore = h.sent.length;
      const eventsBefore = h.errorsOf('invalid_message').length;
      h.send(value);
      await flush();
      assert.equal(h.sent.length, sentBefore, `value ${i} is never answered`);
      assert.equal(h.errorsOf('invalid_message').length, eventsBefore + 1, `value ${i}: one invalid_message event`);
    }
    assert.deepEqual(runs, []);
  }

  test('malformed, wrong direction, unknown properties, bad types → dropped with invalid_message, never answered', async () => {
    const { h, runs } = await hostilePage();
    const cid = h.clientId;
    const call = (fields) => ({ protocol: 1, type: 'call', clientId: cid, id: newId(), tool: 'act', input: {}, ...fields });
    const values = [
      'a string',
      [call({})],
      { protocol: 1, type: 'bogus', clientId: cid, id: newId() },
      // wrong direction: a page→agent message type
      { protocol: 1, type: 'result', clientId: cid, id: newId(), result: { status: 'ok' } },
      // an unknown top-level property
      call({ extra: 1 }),
      // missing / bad fields
      (({ input, ...rest }) => rest)(call({})), // no input
      call({ id: 7 }),
    ];
    await expectDropped(h, runs, values);
    // Still working afterwards.
    assert.deepEqual(await h.callAndWait('act', { ok: true }), { status: 'ok', data: 'ran' });
    h.check();
  });

  test('a value JSON.stringify cannot write (BigInt, cycle, throwing getter, undefined) is dropped as not JSON', async () => {
    const { h, runs } = await hostilePage();
    const call = () => ({ protocol: 1, type: 'call', clientId: h.clientId, id: newId(), tool: 'act', input: {} });
    const cycle = call();
    cycle.input.self = cycle;
    const getter = call();
    Object.defineProperty(getter, 'input', { enumerable: true, get: () => { throw new Error('no'); } });
    await expectDropped(h, runs, [undefined, { ...call(), input: { n: 10n } }, cycle, getter]);
    const messages = h.errorsOf('invalid_message').map((e) => e.message);
    assert.equal(messages.length, 4);
    for (const message of messages) assert.match(message, /^message is not JSON: JSON\.stringify gave no text/);
    h.check();
  });

  test('oversized per maxMessageBytes (UTF-8 bytes of the JSON) → dropped with invalid_message; at the limit accepted', async () => {
    const limit = 400;
    const { h, runs } = await hostilePage({ maxMessageBytes: limit });
    // A call whose JSON is exactly `bytes` UTF-8 bytes long, padded with `unit`.
    const sized = (bytes, unit) => {
      const message = { protocol: 1, type: 'call', clientId: h.clientId, id: newId(), tool: 'act', input: { pad: '' } };
      const base = Buffer.byteLength(JSON.stringify(message));
      const unitBytes = Buffer.byteLength(unit);
      assert.equal((bytes - base) % unitBytes, 0);
      message.input.pad = unit.repeat((bytes - base) / unitBytes);
      assert.equal(Buffer.byteLength(JSON.stringify(message)), bytes);
      return message;
    };
    const atLimit = sized(limit, 'x');
    assert.deepEqual(await h.result((h.send(atLimit), atLimit.id)), { status: 'ok', data: 'ran' });
    runs.length = 0;
    // One byte over (ASCII), and over only when counted in UTF-8 bytes (é is 2 bytes, 1 UTF-16 unit).
    const over = sized(limit + 1, 'x');
    const base = Buffer.byteLength(JSON.stringify({ ...over, input: { pad: '' } }));
    const multibyte = sized(base + 2 * Math.ceil((limit + 1 - base) / 2), 'é');
    assert.ok(JSON.stringify(multibyte).length <= limit, 'under the limit in UTF-16 units');
    // Oversized messages are bounded before the clientId filter: even another page's is reported.
    const otherPage = { ...sized(limit + 1, 'x'), clientId: newId() };
    otherPage.input = { pad: `${otherPage.input.pad}${'x'.repeat(10)}` };
    await expectDropped(h, runs, [over, multibyte, otherPage]);
    // Over the limit in UTF-16 units: refused unread, its length a lower bound of its bytes.
    const units = (value) => JSON.stringify(value).length;
    assert.deepEqual(h.errorsOf('invalid_message').map((e) => e.message), [
      `message of at least ${units(over)} bytes exceeds maxMessageBytes ${limit}`,
      `message of ${Buffer.byteLength(JSON.stringify(multibyte))} bytes exceeds maxMessageBytes ${limit}`,
      `message of at least ${units(otherPage)} bytes exceeds maxMessageBytes ${limit}`,
    ]);
    h.check();
  });

  test('messages are copied once: getters are read once, prototypes do not survive', async () => {
    const h = page();
    const inputs = [];
    h.tm.register({
      name: 'strict',
      description: 'd',
      inputSchema: { type: 'object', properties: { n: { const: 0 } }, required: ['n'] },
      run: (input) => {
        inputs.push(input);
        return 'ran';
      },
    });
    let dangerRuns = 0;
    h.tm.register({ name: 'danger', description: 'd', run: () => ++dangerRuns });
    h.tm.register({ name: 'safe', description: 'd', run: () => 'safe' });
    await until(() => h.lastManifest()?.tools.length === 3, 'tools');

    // A getter whose input changes on every read: the tool never sees unvalidated input.
    let reads = 0;
    const id1 = newId();
    h.send({
      protocol: 1,
      type: 'call',
      clientId: h.clientId,
      id: id1,
      tool: 'strict',
      get input() {
        return { n: reads++ };
      },
    });
    const r1 = await h.result(id1);
    await flush();
    assert.ok(r1.status === 'ok' || r1.status === 'invalid', JSON.stringify(r1));
    for (const input of inputs) assert.deepEqual(input, { n: 0 }, 'only validated input reaches the tool');
    assert.equal(inputs.length, r1.status === 'ok' ? 1 : 0);

    // A getter whose id changes on every read: one answer, for an id that was read.
    const minted = [];
    h.send({
      protocol: 1,
      type: 'call',
      clientId: h.clientId,
      get id() {
        const id = newId();
        minted.push(id);
        return id;
      },
      tool: 'safe',
      input: {},
    });
    await until(() => h.results().some((m) => minted.includes(m.id)), 'answer to the id getter call');
    await flush();
    assert.equal(h.results().filter((m) => minted.includes(m.id)).length, 1, 'answered exactly once');

    // A getter whose tool flips from 'safe' to 'danger' after the first read.
    let toolReads = 0;
    const id3 = newId();
    h.send({
      protocol: 1,
      type: 'call',
      clientId: h.clientId,
      id: id3,
      get tool() {
        return toolReads++ === 0 ? 'safe' : 'danger';
      },
      input: {},
    });
    const r3 = await h.result(id3);
    await flush();
    assert.deepEqual(r3, { status: 'ok', data: 'safe' }, 'the value read when the message was copied is used');
    assert.equal(dangerRuns, 0);

    // Inherited properties do not survive: a call whose input lives on the prototype lacks input.
    const errorsBefore = h.errorsOf('invalid_message').length;
    const proto = Object.create({ input: {} });
    Object.assign(proto, { protocol: 1, type: 'call', clientId: h.clientId, id: newId(), tool: 'safe' });
    h.send(proto);
    await flush();
    assert.equal(h.results(proto.id).length, 0, 'never answered');
    assert.equal(h.errorsOf('invalid_message').length, errorsBefore + 1);

    // Class instances arrive as plain JSON objects, without accessors.
    class Fancy {
      constructor() {
        this.n = 0;
      }
      get hidden() {
        return 'accessor';
      }
    }
    const id5 = newId();
    h.send(h.msg('call', { id: id5, tool: 'strict', input: new Fancy() }));
    assert.deepEqual(await h.result(id5), { status: 'ok', data: 'ran' });
    const received = inputs.at(-1);
    assert.equal(Object.getPrototypeOf(received), Object.prototype);
    assert.deepEqual(received, { n: 0 });
    h.check();
  });

  test('mutating a message after sending does not reach the running tool', async () => {
    const h = page();
    const gate = deferred();
    let seen;
    h.tm.register({
      name: 'hold',
      description: 'd',
      run: async (input) => {
        seen = input;
        await gate.promise;
        return input;
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = newId();
    const message = h.msg('call', { id, tool: 'hold', input: { value: 'original' } });
    h.send(message);
    await until(() => seen, 'run');
    message.input.value = 'mutated';
    message.id = 'mutated-id';
    assert.deepEqual(seen, { value: 'original' });
    gate.resolve();
    const r = await h.result(id);
    assert.deepEqual(r, { status: 'ok', data: { value: 'original' } });
    assert.equal(h.results('mutated-id').length, 0);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('describe', () => {
  test('returns the full manifest entry (summary + inputSchema + outputSchema) as ok data', async () => {
    const h = page();
    const inputSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const outputSchema = { type: 'array', items: { type: 'string' } };
    h.tm.scope('search').register({
      name: 'find',
      title: 'Find',
      description: 'Search the page',
      hints: { readOnly: true, untrustedContent: true },
      inputSchema,
      outputSchema,
      run: () => [],
    });
    h.tm.register({ name: 'plain', description: 'No schema', run: () => 1 });
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const r = await h.result(h.describe('search.find'));
    assert.equal(r.status, 'ok');
    const summary = h.lastManifest().tools.find((t) => t.name === 'search.find');
    assert.deepEqual(r.data, { ...summary, inputSchema, outputSchema });
    assert.equal(r.data.llmName, 'search__find');
    const plain = await h.result(h.describe('plain'));
    assert.equal(plain.status, 'ok');
    assert.ok('inputSchema' in plain.data, 'inputSchema is always part of the full entry');
    assert.ok(!('outputSchema' in plain.data), 'outputSchema is optional');
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('cancel', () => {
  test('cancel aborts the running call’s ctx.signal; the call’s own result follows as cancelled signal', async () => {
    const h = page();
    let signal;
    h.tm.register(hangTool((value) => (signal = value)));
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = h.call('hang', {});
    await until(() => signal, 'run');
    assert.equal(signal.aborted, false);
    h.cancel(id);
    assert.deepEqual(await h.result(id), { status: 'cancelled', by: 'signal' });
    assert.equal(signal.aborted, true);
    h.check();
  });

  test('a tool that reads ctx.signal only after the cancel finds it aborted; ctx has its five properties', async () => {
    const h = page();
    const gate = deferred();
    let ctx;
    let abortedWhenRead;
    h.tm.register({
      name: 'late-reader',
      description: 'd',
      run: async (_input, context) => {
        ctx = context;
        await gate.promise;
        abortedWhenRead = context.signal.aborted;
        throw new Error('stopped');
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = h.call('late-reader', {});
    await until(() => ctx, 'run');
    assert.deepEqual(Object.keys(ctx), ['signal', 'caller', 'callId', 'confirm', 'files']);
    assert.equal(ctx.caller, 'inapp');
    assert.equal(ctx.callId, id);
    assert.equal(typeof ctx.confirm, 'function');
    assert.equal(typeof ctx.files.resolve, 'function');
    h.cancel(id);
    await flush();
    gate.resolve();
    assert.deepEqual(await h.result(id), { status: 'cancelled', by: 'signal' });
    assert.equal(abortedWhenRead, true);
    assert.equal(ctx.signal, ctx.signal, 'one signal per run');
    assert.ok(ctx.signal instanceof AbortSignal);
    h.check();
  });

  test('a tool ignoring the signal is answered cancelled signal after abortGraceMs; its late settle raises late_result', async (t) => {
    const clock = fakeClock(t);
    const h = page({ toolmark: { abortGraceMs: 500, now: clock.now } });
    const gate = deferred();
    let signal;
    h.tm.register({
      name: 'stubborn',
      description: 'd',
      run: async (_input, ctx) => {
        signal = ctx.signal;
        await gate.promise;
        return 'finished anyway';
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = h.call('stubborn', {});
    await until(() => signal, 'run');
    h.cancel(id);
    await flush();
    assert.equal(signal.aborted, true);
    await clock.advance(499);
    assert.equal(h.results(id).length, 0, 'the tool still has its grace period');
    await clock.advance(1);
    assert.deepEqual(await h.result(id), { status: 'cancelled', by: 'signal' });
    assert.equal(h.errorsOf('late_result').length, 0);
    gate.resolve();
    await until(() => h.errorsOf('late_result').length === 1, 'late_result');
    await flush();
    assert.equal(h.results(id).length, 1, 'the late value is never sent');
    const late = h.errorsOf('late_result')[0];
    if ('tool' in late) assert.equal(late.tool, 'stubborn');
    h.check();
  });

  test('a call cancelled while its snapshot is taken never runs; its restorer is not kept', async () => {
    const h = page();
    const gate = deferred();
    let runs = 0;
    let restored = 0;
    h.tm.register({
      name: 'edit',
      description: 'd',
      snapshot: async () => {
        await gate.promise;
        return () => {
          restored += 1;
        };
      },
      run: () => {
        runs += 1;
        return 'ran';
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = h.call('edit', {});
    await flush();
    h.cancel(id);
    await flush();
    gate.resolve();
    assert.deepEqual(await h.result(id), { status: 'cancelled', by: 'signal' });
    await flush();
    assert.equal(runs, 0, 'run never called');
    assert.equal((await h.tm.undo(id)).code, 'undo_unavailable');
    assert.equal(restored, 0);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('tool results', () => {
  test('JSON semantics: toJSON (Date → ISO string), undefined properties dropped, undefined → ok without data', async () => {
    const h = page();
    const date = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
    const values = {
      date: () => ({ at: date }),
      bareDate: () => date,
      tojson: () => ({ custom: { toJSON: () => ({ replaced: true }) } }),
      undef: () => ({ keep: 1, drop: undefined, nested: { also: undefined } }),
      nothing: () => undefined,
      nothingAsync: async () => {},
      nul: () => null,
      str: () => 'text',
      zero: () => 0,
      falsy: () => false,
      array: () => [1, 'two', { three: 3 }],
    };
    for (const [name, run] of Object.entries(values)) h.tm.register({ name, description: 'd', run });
    await until(() => h.lastManifest()?.tools.length === Object.keys(values).length, 'tools');
    const get = (name) => h.callAndWait(name, {});
    assert.deepEqual(await get('date'), { status: 'ok', data: { at: '2024-01-02T03:04:05.678Z' } });
    assert.deepEqual(await get('bareDate'), { status: 'ok', data: '2024-01-02T03:04:05.678Z' });
    assert.deepEqual(await get('tojson'), { status: 'ok', data: { custom: { replaced: true } } });
    assert.deepEqual(await get('undef'), { status: 'ok', data: { keep: 1, nested: {} } });
    for (const name of ['nothing', 'nothingAsync']) {
      const r = await get(name);
      assert.deepEqual(r, { status: 'ok' });
      assert.ok(!('data' in r), 'no value: data absent');
    }
    assert.deepEqual(await get('nul'), { status: 'ok', data: null });
    assert.deepEqual(await get('str'), { status: 'ok', data: 'text' });
    assert.deepEqual(await get('zero'), { status: 'ok', data: 0 });
    assert.deepEqual(await get('falsy'), { status: 'ok', data: false });
    assert.deepEqual(await get('array'), { status: 'ok', data: [1, 'two', { three: 3 }] });
    assert.deepEqual(h.errors, []);
    h.check();
  });

  test('BigInt, cycles, functions, symbols, NaN, ±Infinity → error "Result not serializable" + event transport_failed', async () => {
    const h = page();
    const cyclic = { a: 1 };
    cyclic.self = cyclic;
    const values = {
      bigint: () => ({ n: 10n }),
      bareBigint: () => 10n,
      cycle: () => cyclic,
      fn: () => () => 1,
      nestedFn: () => ({ ok: 1, callback() {} }),
      symbol: () => Symbol('s'),
      nan: () => ({ n: NaN }),
      infinity: () => [1, Infinity],
      bareNegativeInfinity: () => -Infinity,
    };
    for (const [name, run] of Object.entries(values)) h.tm.register({ name, description: 'd', run });
    await until(() => h.lastManifest()?.tools.length === Object.keys(values).length, 'tools');
    for (const name of Object.keys(values)) {
      const before = h.errorsOf('transport_failed').length;
      assert.deepEqual(await h.callAndWait(name, {}), { status: 'error', message: 'Result not serializable' }, name);
      await flush();
      assert.equal(h.errorsOf('transport_failed').length, before + 1, `${name}: one transport_failed event`);
    }
    const said = h.errorsOf('transport_failed').map((event) => event.message).join('\n');
    // A bare value is named by its member of the result, `data`.
    for (const why of ['bigint at "n"', 'function at "callback"', 'NaN at "n"', 'Infinity at "1"', '-Infinity at "data"']) {
      assert.ok(said.includes(why), `the event says ${why}: ${said}`);
    }
    h.check();
  });

  test('a result is written as JSON.stringify writes it in its message: toJSON is given its key, data; a Number object is its number', async () => {
    const h = page();
    h.tm.register({ name: 'keyed', description: 'd', run: () => ({ toJSON: (key) => `key=${key}` }) });
    h.tm.register({ name: 'nested', description: 'd', run: () => ({ at: { toJSON: (key) => `key=${key}` } }) });
    h.tm.register({ name: 'boxed', description: 'd', run: () => ({ ratio: new Number(0.5), bad: new Number(NaN) }) });
    h.tm.register({ name: 'inherits', description: 'd', run: () => ({ x: Object.assign(Object.create(Number.prototype), { a: 1 }) }) });
    await until(() => h.lastManifest()?.tools.length === 4, 'tools');
    // An object that only inherits from Number.prototype is no Number object: written as an object.
    assert.deepEqual(await h.callAndWait('inherits', {}), { status: 'ok', data: { x: { a: 1 } } });
    assert.deepEqual(await h.callAndWait('keyed', {}), { status: 'ok', data: 'key=data' });
    assert.deepEqual(await h.callAndWait('nested', {}), { status: 'ok', data: { at: 'key=at' } });
    assert.deepEqual(await h.callAndWait('boxed', {}), { status: 'error', message: 'Result not serializable' });
    await flush();
    assert.match(h.errorsOf('transport_failed').at(-1).message, /NaN at "bad"/);
    h.check();
  });

  test('a throwing tool → error "Tool failed"; the details go only to the tool_threw event', async () => {
    const h = page();
    h.tm.register({ name: 'sync', description: 'd', run: () => { throw new Error('secret-detail-1'); } });
    h.tm.register({ name: 'async', description: 'd', run: async () => { throw new TypeError('secret-detail-2'); } });
    h.tm.register({ name: 'str', description: 'd', run: () => { throw 'secret-detail-3'; } });
    await until(() => h.lastManifest()?.tools.length === 3, 'tools');
    for (const [i, name] of ['sync', 'async', 'str'].entries()) {
      assert.deepEqual(await h.callAndWait(name, {}), { status: 'error', message: 'Tool failed' });
      await flush();
      const events = h.errorsOf('tool_threw');
      assert.equal(events.length, i + 1);
      assert.match(events[i].message, new RegExp(`secret-detail-${i + 1}`), 'details in the event');
      if ('tool' in events[i]) assert.equal(events[i].tool, name);
    }
    assert.ok(!JSON.stringify(h.sent).includes('secret-detail'), 'details never sent');
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('input validation', () => {
  test('input that fails inputSchema → invalid with dotted issue paths; the tool does not run', async () => {
    const h = page();
    const runs = [];
    h.tm.register({
      name: 'order',
      description: 'd',
      inputSchema: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        },
        required: ['items'],
      },
      run: (input) => (runs.push(input), 'ordered'),
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const r = await h.callAndWait('order', { items: [{ name: 5 }] });
    assert.equal(r.status, 'invalid');
    assert.ok(Array.isArray(r.issues) && r.issues.length >= 1);
    assert.ok(r.issues.some((i) => i.path === 'items.0.name'), JSON.stringify(r.issues));
    for (const issue of r.issues) assert.equal(typeof issue.message, 'string');
    assert.deepEqual(runs, []);
    assert.deepEqual(await h.callAndWait('order', { items: [{ name: 'tea' }] }), { status: 'ok', data: 'ordered' });
    h.check();
  });

  test('a Standard Schema (zod) validates too, with dotted issue paths', async () => {
    const { z } = await import('zod');
    const h = page();
    const runs = [];
    h.tm.register({
      name: 'order',
      description: 'd',
      inputSchema: z.object({ items: z.array(z.object({ name: z.string() })) }),
      run: (input) => (runs.push(input), 'ordered'),
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const r = await h.callAndWait('order', { items: [{ name: 5 }] });
    assert.equal(r.status, 'invalid');
    assert.ok(r.issues.some((i) => i.path === 'items.0.name'), JSON.stringify(r.issues));
    assert.deepEqual(runs, []);
    assert.deepEqual(await h.callAndWait('order', { items: [{ name: 'tea' }] }), { status: 'ok', data: 'ordered' });
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('registry errors', () => {
  test('invalid_name and duplicate_name (incl. full names joined in a scope) are error events; nothing is registered', async () => {
    const h = page();
    await h.ready();
    h.tm.register(echo('a.b'));
    await until(() => h.lastManifest().tools.length === 1, 'tool');
    const rev = h.tm.rev;
    const manifests = h.manifests().length;
    h.tm.register(echo('has space'));
    const ten = h.tm.scope('s'.repeat(10));
    ten.register(echo('n'.repeat(118))); // 129 after joining
    await flush();
    assert.equal(h.errorsOf('invalid_name').length, 2);
    h.tm.scope('a').register(echo('b')); // same full name a.b
    await flush();
    assert.equal(h.errorsOf('duplicate_name').length, 1);
    assert.equal(h.tm.rev, rev, 'no revision');
    assert.equal(h.manifests().length, manifests, 'no manifest');
    // The longest full name a scope can join is valid.
    ten.register(echo('n'.repeat(117))); // 128 after joining
    await until(() => h.lastManifest().tools.length === 2, 'valid name');
    assert.equal(h.errors.length, 3);
    h.check();
  });

  test('with dev: true the same problems throw ToolmarkError with the same code', async () => {
    const h = page({ toolmark: { dev: true } });
    await h.ready();
    h.tm.register(echo('a.b'));
    const throwsCode = (fn, code) =>
      assert.throws(fn, (error) => error instanceof ToolmarkError && error.code === code && error.name === 'ToolmarkError');
    throwsCode(() => h.tm.register(echo('bad name')), 'invalid_name');
    throwsCode(() => h.tm.register(echo('x'.repeat(129))), 'invalid_name');
    throwsCode(() => h.tm.register(echo('a.b')), 'duplicate_name');
    throwsCode(() => h.tm.register(echo('a__b')), 'duplicate_name');
    const s = h.tm.scope('gone');
    s.dispose();
    throwsCode(() => s.register(echo('x')), 'scope_disposed');
    await flush();
    assert.deepEqual(h.errors, [], 'thrown instead of emitted');
    assert.deepEqual(
      h.lastManifest().tools.map((t) => t.name),
      ['a.b'],
    );
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('policy', () => {
  test("inapp destructive 'deny' → listed, calls refused not_allowed (no rev); the human can still run it", async () => {
    const h = page({ toolmark: { policy: { inapp: { destructive: 'deny' } } } });
    let runs = 0;
    h.tm.register({ name: 'wipe', description: 'd', hints: { destructive: true }, run: () => ++runs });
    await until(() => h.lastManifest()?.tools.length === 1, 'manifest');
    const r = await h.callAndWait('wipe', {});
    assert.equal(r.status, 'refused');
    assert.equal(r.code, 'not_allowed');
    assert.equal(typeof r.message, 'string');
    assert.ok(!('rev' in r), 'rev only for unknown_tool / stale');
    assert.equal(runs, 0);
    assert.deepEqual(await h.tm.call('wipe', {}, { caller: 'human' }), { status: 'ok', data: 1 });
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('undo, files, bridge lifecycle', () => {
  test('tm.undo(callId) runs the snapshot restorer once; otherwise refused undo_unavailable', async () => {
    const h = page();
    const state = { value: 'before' };
    const callIds = [];
    let restores = 0;
    h.tm.register({
      name: 'set',
      description: 'd',
      snapshot: (input) => {
        assert.ok(input && typeof input === 'object');
        const saved = state.value;
        return () => {
          restores += 1;
          state.value = saved;
        };
      },
      run: (input, ctx) => {
        callIds.push(ctx.callId);
        state.value = input.value;
        return state.value;
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    assert.deepEqual(await h.callAndWait('set', { value: 'after' }), { status: 'ok', data: 'after' });
    assert.equal(typeof callIds[0], 'string');
    assert.deepEqual(await h.tm.undo(callIds[0]), { status: 'ok' });
    assert.equal(state.value, 'before');
    assert.equal(restores, 1);
    const unavailable = await h.tm.undo(callIds[0]);
    assert.equal(unavailable.status, 'refused');
    assert.equal(unavailable.code, 'undo_unavailable');
    assert.ok(!('rev' in unavailable));
    assert.equal((await h.tm.undo('never-called')).code, 'undo_unavailable');
    assert.equal(restores, 1);
    h.check();
  });

  test('a snapshot that returns no function leaves its call no undo: undo_unavailable, no tool_threw', async () => {
    const h = page();
    const callIds = [];
    h.tm.register({
      name: 'set',
      description: 'd',
      snapshot: () => undefined,
      run: (_input, ctx) => {
        callIds.push(ctx.callId);
        return 'done';
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    assert.deepEqual(await h.callAndWait('set', {}), { status: 'ok', data: 'done' });
    const unavailable = await h.tm.undo(callIds[0]);
    assert.equal(unavailable.status, 'refused');
    assert.equal(unavailable.code, 'undo_unavailable');
    assert.deepEqual(h.errorsOf('tool_threw'), []);
    h.check();
  });

  test('restorers are the runs\': a later run under the same call id cannot drop or replace the kept one', async () => {
    const h = page();
    const state = { value: 'before' };
    let runs = 0;
    h.tm.register({
      name: 'set',
      description: 'd',
      snapshot: () => {
        const saved = state.value;
        return () => {
          state.value = saved;
        };
      },
      run: (input) => {
        runs += 1;
        if (input.fail) throw new Error('no');
        state.value = input.value;
        return state.value;
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = newId();
    assert.deepEqual(await h.callAndWait('set', { value: 'after' }, { id }), { status: 'ok', data: 'after' });
    // Another bridge of the same page replays the id: a duplicate, nothing runs.
    h.detach();
    h.attach();
    await until(() => h.manifests().length === 2, 'manifest of the new bridge');
    h.call('set', { fail: true }, { id });
    await flush();
    assert.equal(runs, 1, 'the replay on the new bridge did not run');
    // 1000 other ids later the page has forgotten it: the same id runs again, and fails.
    for (let i = 0; i < 1000; i++) h.describe('set');
    await until(() => h.results().length === 1001, '1000 describes');
    h.call('set', { fail: true }, { id });
    await until(() => h.results(id).length === 2, 'the second run');
    assert.deepEqual(h.results(id)[1].result, { status: 'error', message: 'Tool failed' });
    assert.equal(runs, 2);
    // The failed run's restorer went; the first run's is still there.
    assert.deepEqual(await h.tm.undo(id), { status: 'ok' });
    assert.equal(state.value, 'before');
    assert.deepEqual(h.errorsOf('tool_threw').map((e) => e.message), ['Error: no']);
  });

  test('ctx.files.resolve throws ToolmarkError files_not_configured', async () => {
    const h = page();
    let caught;
    h.tm.register({
      name: 'upload',
      description: 'd',
      run: (_input, ctx) => {
        try {
          ctx.files.resolve('file-1');
        } catch (error) {
          caught = error;
        }
        return caught?.code;
      },
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    assert.deepEqual(await h.callAndWait('upload', {}), { status: 'ok', data: 'files_not_configured' });
    assert.ok(caught instanceof ToolmarkError);
    assert.equal(caught.code, 'files_not_configured');
    h.check();
  });

  test('disposing the bridge aborts in-flight calls and closes the transport; a new transport attaches again', async () => {
    const h = page();
    let signal;
    let queuedRuns = 0;
    const s = h.tm.scope('s');
    s.register(hangTool((value) => (signal = value)));
    s.register({ name: 'next', description: 'd', run: () => ++queuedRuns });
    await until(() => h.lastManifest()?.tools.length === 2, 'tools');
    const id = h.call('s.hang', {});
    const queued = h.call('s.next', {});
    await until(() => signal, 'run');
    const clientId = h.clientId;
    const firstChannel = h.channel;
    const sentBefore = h.sent.length;
    h.detach();
    await flush();
    assert.equal(signal.aborted, true, 'in-flight call aborted');
    assert.deepEqual(h.errorsOf('late_result'), [], 'a tool that honours the abort raises no late_result');
    assert.equal(h.closes, 1, 'transport.close() called');
    h.detach(); // idempotent
    await flush();
    assert.equal(h.closes, 1);
    assert.equal(h.sent.length, sentBefore, 'nothing sent after dispose');
    assert.equal(queuedRuns, 0, 'queued calls do not run');
    assert.equal(h.results(id).length + h.results(queued).length, 0);
    // Revisions are no longer sent on the old transport.
    h.tm.register(echo('later'));
    await flush();
    assert.equal(h.sent.length, sentBefore);
    // Messages to the old transport are not handled.
    firstChannel.agent.send({ protocol: 1, type: 'call', clientId, id: newId(), tool: 's.next', input: {} });
    await flush();
    assert.equal(queuedRuns, 0);

    // A new transport attaches again: fresh manifest with the current tools.
    h.attach();
    const manifest = await until(() => h.sent.length > sentBefore && h.sent.at(-1), 'new manifest');
    assert.equal(manifest.type, 'manifest');
    assert.equal(manifest.clientId, clientId, 'same page load, same clientId');
    assert.equal(manifest.rev, h.tm.rev);
    assert.deepEqual(
      manifest.tools.map((t) => t.name),
      ['later', 's.hang', 's.next'],
    );
    assert.deepEqual(await h.callAndWait('s.next', {}), { status: 'ok', data: 1 });
    h.check();
  });

  test("bridge caller accepts only 'inapp' (any other value throws when the bridge is created)", () => {
    const { transport } = createInPageChannel();
    assert.throws(() => bridge({ transport, caller: 'human' }));
    assert.throws(() => bridge({ transport, caller: 'agent' }));
    assert.doesNotThrow(() => bridge({ transport, caller: 'inapp' }));
  });
});

// ---------------------------------------------------------------------------
describe('formTools: FieldChange redaction and the stale-form rule', () => {
  function signupPage() {
    const h = page();
    const form = fakeForm('signup', [
      field('email'),
      field('password', { type: 'password' }),
      field('card', { autocomplete: 'cc-number' }),
      field('secret'),
      field('nickname', { value: 'nick' }),
    ]);
    formTools(form, { scope: h.tm.scope('signup'), sensitive: ['secret'] });
    return { h, form };
  }
  const SECRETS = { email: 'a@example.com', password: 'hunter2', card: '4111111111111111', secret: 's3cr3t-value' };

  test('submit is consequential: needs_confirmation with changes, sensitive fields "[redacted]"; approval submits', async () => {
    const { h, form } = signupPage();
    await until(() => h.lastManifest()?.tools.length === 3, 'form tools');
    const byName = Object.fromEntries(h.lastManifest().tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ['signup.fill', 'signup.read', 'signup.submit']);
    assert.equal(byName['signup.submit'].hints.consequential, true);

    assert.equal((await h.callAndWait('signup.fill', SECRETS)).status, 'ok');
    const read = await h.callAndWait('signup.read', {});
    assert.equal(read.status, 'ok');
    assert.equal(read.data.email, 'a@example.com');
    for (const name of ['password', 'card', 'secret']) assert.equal(read.data[name], '[redacted]', `read: ${name}`);

    const id = h.call('signup.submit', {});
    const r = await h.result(id);
    assert.equal(r.status, 'needs_confirmation');
    assert.equal(typeof r.summary, 'string');
    const changes = Object.fromEntries(r.changes.map((c) => [c.path, c]));
    assert.deepEqual(changes.email, { path: 'email', after: 'a@example.com' }, 'empty before a fill: before absent');
    for (const name of ['password', 'card', 'secret']) {
      assert.deepEqual(changes[name], { path: name, after: '[redacted]' }, `changes: ${name}`);
    }
    assert.equal(form.submits, 0, 'not submitted before approval');
    const serialized = JSON.stringify(h.sent);
    for (const name of ['password', 'card', 'secret']) assert.ok(!serialized.includes(SECRETS[name]), `${name} never sent`);

    assert.deepEqual(await h.tm.confirmPending(r.confirmId, true), { status: 'ok', data: { submitted: true } });
    const c = await until(() => h.confirmeds(r.confirmId)[0], 'confirmed');
    assert.deepEqual(c.result, { status: 'ok', data: { submitted: true } });
    assert.equal(form.submits, 1);
    h.check();
  });

  test('a submit approved after the form changed → refused stale "Form changed since confirmation was requested"', async () => {
    const { h, form } = signupPage();
    await until(() => h.lastManifest()?.tools.length === 3, 'form tools');
    await h.callAndWait('signup.fill', SECRETS);
    const r = await h.callAndWait('signup.submit', {});
    assert.equal(r.status, 'needs_confirmation');
    // The agent (or the user) changes the form while the confirmation waits.
    assert.equal((await h.callAndWait('signup.fill', { email: 'b@example.com' })).status, 'ok');
    const stale = {
      status: 'refused',
      code: 'stale',
      message: 'Form changed since confirmation was requested',
      rev: h.tm.rev,
    };
    assert.deepEqual(await h.tm.confirmPending(r.confirmId, true), stale);
    const c = await until(() => h.confirmeds(r.confirmId)[0], 'confirmed');
    assert.deepEqual(c.result, stale);
    assert.equal(form.submits, 0);
    // Re-fill and ask again: unchanged form → approved submit runs.
    const again = await h.callAndWait('signup.submit', {});
    assert.deepEqual(await h.tm.confirmPending(again.confirmId, true), { status: 'ok', data: { submitted: true } });
    assert.equal(form.submits, 1);
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('navigation (D23)', () => {
  test('a navigation tool returns ok before its scope is disposed; the page then publishes the new tool list, same clientId', async () => {
    const h = page();
    await h.ready();
    const first = h.tm.scope('page1');
    first.register({
      name: 'go',
      description: 'Navigate to page 2',
      run: () => {
        setImmediate(() => {
          first.dispose();
          h.tm.scope('page2').register(echo('here'));
        });
        return { navigated: true };
      },
    });
    const other = h.tm.scope('page3');
    other.register({
      name: 'go',
      description: 'Navigates in a microtask',
      run: () => {
        queueMicrotask(() => other.dispose());
        return { navigated: 3 };
      },
    });
    await until(() => h.lastManifest().tools.length === 2, 'tools');
    const clientId = h.clientId;
    const id = h.call('page1.go', {});
    assert.deepEqual(await h.result(id), { status: 'ok', data: { navigated: true } });
    await until(() => h.lastManifest().tools.some((t) => t.name === 'page2.here'), 'page 2 manifest');
    const resultIndex = h.sent.indexOf(h.results(id)[0]);
    const after = h.manifests().filter((m) => h.sent.indexOf(m) > resultIndex);
    assert.ok(after.length >= 1, 'the new tool list follows the result');
    assert.ok(after.every((m) => m.clientId === clientId), 'the clientId stays the same');
    assert.ok(!h.lastManifest().tools.some((t) => t.name === 'page1.go'));
    // A scope disposed right after its tool returned: the call still answers ok.
    assert.deepEqual(await h.callAndWait('page3.go', {}), { status: 'ok', data: { navigated: 3 } });
    await until(() => !h.lastManifest().tools.some((t) => t.name === 'page3.go'), 'page 3 gone');
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('page-side error event codes', () => {
  test('tool_threw covers summary, snapshot and validator too (result: error "Tool failed")', async () => {
    const h = page();
    const throwingStandard = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => {
          throw new Error('validator-detail');
        },
      },
    };
    let runs = 0;
    h.tm.register({
      name: 'sum',
      description: 'd',
      hints: { consequential: true },
      summary: () => {
        throw new Error('summary-detail');
      },
      run: () => ++runs,
    });
    h.tm.register({
      name: 'snap',
      description: 'd',
      snapshot: () => {
        throw new Error('snapshot-detail');
      },
      run: () => ++runs,
    });
    h.tm.register({ name: 'val', description: 'd', inputSchema: throwingStandard, run: () => ++runs });
    await until(() => h.lastManifest()?.tools.length === 3, 'tools');
    for (const [name, detail] of [
      ['sum', 'summary-detail'],
      ['snap', 'snapshot-detail'],
      ['val', 'validator-detail'],
    ]) {
      assert.deepEqual(await h.callAndWait(name, {}), { status: 'error', message: 'Tool failed' }, name);
      await flush();
      assert.ok(
        h.errorsOf('tool_threw').some((e) => e.message.includes(detail)),
        `${name}: tool_threw carries the detail`,
      );
    }
    assert.equal(runs, 0);
    assert.ok(!JSON.stringify(h.sent).includes('-detail'));
    h.check();
  });

  test('transport_failed when the transport fails to send or to close', async () => {
    let failing = true;
    const h = page({ failSend: (m) => failing && m.type === 'result', failClose: true });
    h.tm.register(echo('e'));
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    const id = h.call('e', {});
    await until(() => h.errorsOf('transport_failed').length === 1, 'transport_failed on send');
    assert.equal(h.results(id).length, 0);
    failing = false;
    assert.deepEqual(await h.callAndWait('e', { again: 1 }), { status: 'ok', data: { echoed: { again: 1 } } });
    h.detach();
    await flush();
    assert.equal(h.closes, 1);
    assert.equal(h.errorsOf('transport_failed').length, 2, 'transport_failed on close');
    h.check();
  });

  test("missing_confirm_handler: registering a consequential tool without a confirmation path (confirmMode.inapp 'none') raises the event; dev throws ToolmarkError", async () => {
    const h = page({ toolmark: { confirmMode: { inapp: 'none' } } });
    h.tm.register({ name: 'pay', description: 'd', hints: { consequential: true }, run: () => 1 });
    await until(() => h.tm.rev === 1, 'registered');
    await flush();
    assert.equal(h.errorsOf('missing_confirm_handler').length, 1);
    const dev = createToolmark({ dev: true, confirmMode: { inapp: 'none' } });
    assert.throws(
      () => dev.register({ name: 'pay', description: 'd', hints: { consequential: true }, run: () => 1 }),
      (e) => e instanceof ToolmarkError && e.code === 'missing_confirm_handler',
    );
    h.check();
  });

  test('ctx_confirm_unavailable: ctx.confirm used by caller inapp resolves false and raises the event', async () => {
    const h = page();
    h.tm.register({
      name: 'ask',
      description: 'd',
      run: async (_input, ctx) => ({ confirmed: await ctx.confirm('Really?') }),
    });
    await until(() => h.lastManifest()?.tools.length === 1, 'tool');
    assert.deepEqual(await h.callAndWait('ask', {}), { status: 'ok', data: { confirmed: false } });
    assert.equal(h.errorsOf('ctx_confirm_unavailable').length, 1);
    h.check();
  });

  test('ctx.confirm by a human caller asks onConfirm({ tool, message }) with the full tool name and resolves its answer', async () => {
    const asked = [];
    const tm = createToolmark({ onConfirm: (request) => asked.push(request) === 1 });
    tm.scope('shop').register({
      name: 'ask',
      description: 'd',
      run: async (_input, ctx) => [await ctx.confirm('Really?'), await ctx.confirm()],
    });
    assert.deepEqual(await tm.call('shop.ask', {}), { status: 'ok', data: [true, false] });
    assert.deepEqual(asked, [
      { tool: 'shop.ask', message: 'Really?' },
      { tool: 'shop.ask', message: '' },
    ]);
  });

  test('invalid_policy (policy.human entry, unknown hint class) and invalid_confirm_mode: events, thrown in dev', () => {
    for (const [options, code] of [
      [{ policy: { human: { destructive: 'deny' } } }, 'invalid_policy'],
      [{ policy: { inapp: { sparkly: 'deny' } } }, 'invalid_policy'],
      [{ confirmMode: { inapp: 'sometimes' } }, 'invalid_confirm_mode'],
    ]) {
      const events = [];
      assert.doesNotThrow(() => createToolmark({ ...options, onError: (e) => events.push(e) }));
      assert.deepEqual(
        events.map((e) => e.code),
        [code],
        JSON.stringify(options),
      );
      assert.throws(
        () => createToolmark({ ...options, dev: true }),
        (e) => e instanceof ToolmarkError && e.code === code,
        JSON.stringify(options),
      );
    }
  });

  test('tool_budget_exceeded: in dev, raised when the tools visible to inapp exceed toolBudget (hidden ones do not count)', async () => {
    const h = page({ toolmark: { dev: true, toolBudget: 2, policy: { inapp: { destructive: 'hide' } } } });
    await h.ready();
    h.tm.register(echo('one'));
    h.tm.register(echo('two'));
    h.tm.register({ ...echo('hidden'), hints: { destructive: true } });
    await flush();
    assert.equal(h.errorsOf('tool_budget_exceeded').length, 0, 'hidden tools do not count');
    h.tm.register(echo('three'));
    await flush();
    assert.equal(h.errorsOf('tool_budget_exceeded').length, 1);
    h.check();
  });

  test('output_invalid: in dev, a tool output failing its outputSchema raises the event', async () => {
    const def = {
      name: 'count',
      description: 'd',
      outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      run: () => ({ n: 'not a number' }),
    };
    const dev = page({ toolmark: { dev: true } });
    dev.tm.register(def);
    await until(() => dev.lastManifest()?.tools.length === 1, 'tool');
    const r = await dev.callAndWait('count', {});
    await flush();
    assert.equal(dev.errorsOf('output_invalid').length, 1);
    assert.equal(typeof r.status, 'string');
    dev.check();
  });

  test('schema_conversion_failed: no JSON Schema for the input → production registers it with inputSchema {}; dev throws', async () => {
    const opaque = {
      '~standard': {
        version: 1,
        vendor: 'opaque',
        validate: (value) =>
          value && typeof value.n === 'number' ? { value } : { issues: [{ message: 'n must be a number', path: ['n'] }] },
      },
    };
    const h = page();
    h.tm.register({ name: 'opaque', description: 'd', inputSchema: opaque, run: (input) => input.n });
    await until(() => h.lastManifest()?.tools.length === 1, 'registered anyway');
    assert.equal(h.errorsOf('schema_conversion_failed').length, 1);
    const d = await h.result(h.describe('opaque'));
    assert.deepEqual(d.data.inputSchema, {});
    assert.deepEqual(await h.callAndWait('opaque', { n: 3 }), { status: 'ok', data: 3 });
    const bad = await h.callAndWait('opaque', { n: 'x' });
    assert.equal(bad.status, 'invalid');
    assert.deepEqual(bad.issues.map((i) => i.path), ['n']);
    const dev = createToolmark({ dev: true });
    assert.throws(
      () => dev.register({ name: 'opaque', description: 'd', inputSchema: opaque, run: () => 1 }),
      (e) => e instanceof ToolmarkError && e.code === 'schema_conversion_failed',
    );
    h.check();
  });
});

// ---------------------------------------------------------------------------
describe('ToolmarkError invalid_path (path helpers)', () => {
  test('unsafe or malformed paths throw ToolmarkError invalid_path; nothing is polluted', () => {
    const isInvalidPath = (e) => e instanceof ToolmarkError && e.code === 'invalid_path';
    for (const path of ['__proto__.polluted', 'constructor.prototype.polluted', 'a..b', 'a.', '.a']) {
      assert.throws(() => setPath({}, path, 1), isInvalidPath, `setPath ${path}`);
      assert.throws(() => getPath({}, path), isInvalidPath, `getPath ${path}`);
    }
    assert.equal({}.polluted, undefined);
    assert.throws(() => flatten(JSON.parse('{"__proto__": {"x": 1}}')), isInvalidPath);
    // Well-formed paths work.
    assert.equal(getPath({ items: [{ name: 'tea' }] }, 'items.0.name'), 'tea');
    assert.deepEqual(setPath({}, 'items.0.name', 'tea'), { items: [{ name: 'tea' }] });
    assert.deepEqual(flatten({ a: { b: 1 }, c: [2] }), { 'a.b': 1, 'c.0': 2 });
  });

  test('what flatten writes, setPath rebuilds and getPath reads: a digit key that is no array index makes an object, a prefix counts toward the segments', () => {
    const value = { zip: { '007': 'bond' }, ids: { 12345678901: 'big' }, items: [{ name: 'tea' }] };
    const flat = flatten(value);
    const rebuilt = Object.entries(flat).reduce((target, [path, leaf]) => setPath(target, path, leaf), {});
    assert.deepEqual(JSON.parse(JSON.stringify(rebuilt)), value);
    assert.equal(Array.isArray(rebuilt.items), true);
    // 999 levels under a two-segment prefix is 1001 segments: over the limit.
    let deep = 1;
    for (let i = 0; i < 999; i++) deep = { k: deep };
    assert.throws(() => flatten(deep, 'p.q'), (e) => e instanceof ToolmarkError && e.code === 'invalid_path');
    const [path] = Object.keys(flatten(deep, 'p'));
    assert.equal(getPath(setPath({}, path, 1), path), 1);
  });

  test('a path holding a lone surrogate is invalid_path, not a path to another key; a real U+FFFD is a key like any', () => {
    const isInvalidPath = (e) => e instanceof ToolmarkError && e.code === 'invalid_path';
    const lone = 'a.b\uD800';
    assert.throws(() => setPath({}, lone, 1), isInvalidPath);
    assert.throws(() => getPath({ a: { 'b\uD800': 1 } }, lone), isInvalidPath);
    assert.deepEqual(setPath({}, 'a.b\uFFFD', 1), { a: { 'b\uFFFD': 1 } });
    assert.equal(getPath({ a: { 'b\uFFFD': 1 } }, 'a.b\uFFFD'), 1);
    // flatten writes no path getPath would refuse; a pair is a key like any.
    assert.throws(() => flatten({ a: { 'b\uD800': 1 } }), isInvalidPath);
    assert.deepEqual(flatten({ a: { 'b\uD83D\uDE00': 1 } }), { 'a.b\uD83D\uDE00': 1 });
  });
});
