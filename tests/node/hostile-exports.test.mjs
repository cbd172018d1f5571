// Every public export of the package driven with hostile values (100k-deep
// arrays and objects, cycles, proxies whose traps throw, revoked proxies,
// getters that throw, huge strings, symbols, BigInts), in Node and in real
// headless Chromium. No call may trap the module (a WebAssembly
// RuntimeError, after which every call into it traps) or throw anything but
// an error; every promise settles; and afterwards the bridge still answers
// a normal call through the in-page channel and the path helpers still work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { launchChromium, serve } from './support/browser.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Runs in Node and in the page: `m` holds every export of the package.
// Returns what went wrong, as plain data.
async function driveHostile(m) {
  const report = { traps: [], nonErrors: [], unsettled: [], slow: [], calls: 0 };
  const HANG_MS = 5000;

  const deepArray = (n) => {
    let v = [];
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const deepObject = (n) => {
    let v = {};
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  const boom = () => {
    throw new Error('boom');
  };
  const throwingProxy = (target = {}) =>
    new Proxy(target, {
      get: boom, set: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom,
      getPrototypeOf: boom, defineProperty: boom, deleteProperty: boom, apply: boom,
      construct: boom, isExtensible: boom, preventExtensions: boom, setPrototypeOf: boom,
    });
  const revoked = (target = {}) => {
    const r = Proxy.revocable(target, {});
    r.revoke();
    return r.proxy;
  };
  const cyclicObject = () => {
    const v = { a: 1, b: { c: [] } };
    v.b.c.push(v);
    v.self = v;
    return v;
  };
  const cyclicArray = () => {
    const v = [1];
    v.push(v);
    return v;
  };
  const getters = () => {
    const v = {};
    for (const key of ['name', 'description', 'run', 'inputSchema', 'transport', 'scope', 'elements', 'a', 'type', 'id', 'url', 'target', 'toJSON', 'then', 'length', 'modelContext', 'echo', 'channel']) {
      Object.defineProperty(v, key, { get: boom, enumerable: true });
    }
    return v;
  };
  const huge = 'x'.repeat(1 << 23);
  // Made afresh for every use: setPath writes into its target.
  const makers = {
    'deep array 100k': () => deepArray(100_000),
    'deep object 100k': () => deepObject(100_000),
    'cyclic object': cyclicObject,
    'cyclic array': cyclicArray,
    'throwing proxy': () => throwingProxy(),
    'throwing proxy of an array': () => throwingProxy([1, 2]),
    'throwing proxy of a function': () => throwingProxy(function f() {}),
    'array proxy whose get throws': () => new Proxy([1, 2], { get: boom }),
    'revoked proxy': () => revoked(),
    'revoked proxy of an array': () => revoked([]),
    'throwing getters': getters,
    'huge string': () => huge,
    'huge dotted string': () => 'a.'.repeat(1 << 20) + 'a',
    symbol: () => Symbol('hostile'),
    bigint: () => 10n ** 30n,
    'object holding a BigInt': () => ({ a: 1n }),
    'object with a throwing toJSON': () => ({ toJSON: boom }),
    function: () => boom,
    NaN: () => NaN,
    undefined: () => undefined,
    null: () => null,
  };
  const names = Object.keys(makers);

  const settle = async (promise) => {
    let timer;
    const hang = new Promise((resolve) => {
      timer = setTimeout(() => resolve('hang'), HANG_MS);
    });
    try {
      return await Promise.race([Promise.resolve(promise).then(() => 'settled', () => 'settled'), hang]);
    } finally {
      clearTimeout(timer);
    }
  };
  const attempt = async (label, f) => {
    report.calls += 1;
    const started = Date.now();
    try {
      const out = f();
      if (out && typeof out.then === 'function') {
        if ((await settle(out)) === 'hang') report.unsettled.push(label);
      }
    } catch (error) {
      if (error instanceof WebAssembly.RuntimeError) report.traps.push(`${label}: ${error.message}`);
      else if (!(error instanceof Error)) report.nonErrors.push(`${label}: ${typeof error}`);
    }
    const ms = Date.now() - started;
    if (ms > HANG_MS) report.slow.push(`${label}: ${ms} ms`);
  };

  const tm = m.createToolmark({ onError: () => {} });
  const scope = tm.scope('hostile');
  const form = typeof document === 'undefined' ? undefined : document.createElement('form');
  const results = [];
  tm.register({
    name: 'ret',
    description: 'Returns the hostile value named in its input',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
    run: ({ name }) => makers[name](),
  });

  for (const name of names) {
    const at = (what) => `${what} ← ${name}`;
    const make = makers[name];
    await attempt(at('newId'), () => m.newId(make()));
    await attempt(at('llmName'), () => m.llmName(make()));
    await attempt(at('getPath(target)'), () => m.getPath(make(), 'a.a.a'));
    await attempt(at('getPath(path)'), () => m.getPath({ a: 1 }, make()));
    await attempt(at('setPath(target)'), () => m.setPath(make(), 'a.b', 1));
    await attempt(at('setPath(path)'), () => m.setPath({}, make(), 1));
    await attempt(at('setPath(value)'), () => m.setPath({}, 'a.0.b', make()));
    await attempt(at('flatten'), () => m.flatten(make()));
    await attempt(at('flatten(prefix)'), () => m.flatten({ a: 1 }, make()));
    await attempt(at('flatten(nested)'), () => m.flatten({ a: [make(), { b: make() }] }));
    await attempt(at('validateMessage toPage'), () => m.validateMessage(make(), 'toPage'));
    await attempt(at('validateMessage toAgent'), () => m.validateMessage(make(), 'toAgent'));
    await attempt(at('validateMessage(direction)'), () => m.validateMessage({}, make()));
    await attempt(at('createToolmark'), () => m.createToolmark(make()));
    await attempt(at('createToolmark({policy})'), () => m.createToolmark({ policy: make(), confirmMode: make() }));
    await attempt(at('register'), () => tm.register(make()));
    await attempt(at('register(inputSchema)'), () => scope.register({ name: `in${results.length}`, description: 'd', inputSchema: make(), run: () => 1 }));
    await attempt(at('register(outputSchema)'), () => scope.register({ name: `out${results.length}`, description: 'd', outputSchema: make(), run: () => 1 }));
    await attempt(at('register(hints)'), () => scope.register({ name: `hi${results.length}`, description: 'd', hints: make(), run: () => 1 }));
    await attempt(at('register(sensitive)'), () => scope.register({ name: `se${results.length}`, description: 'd', sensitive: make(), run: () => 1 }));
    await attempt(at('register(name)'), () => scope.register({ name: make(), description: make(), run: make() }));
    await attempt(at('scope'), () => tm.scope(make()));
    await attempt(at('manifest'), () => tm.manifest(make()));
    await attempt(at('call(name)'), () => tm.call(make(), {}));
    await attempt(at('call(input)'), () => tm.call('ret', make()));
    await attempt(at('call(ret)'), () => tm.call('ret', { name }));
    await attempt(at('confirmPending'), () => tm.confirmPending(make(), make()));
    await attempt(at('undo'), () => tm.undo(make()));
    await attempt(at('subscribePending'), () => tm.subscribePending(make()));
    await attempt(at('events.on'), () => tm.events.on(make(), make()));
    await attempt(at('use'), () => tm.use(make()));
    await attempt(at('bridge'), () => m.bridge(make()));
    await attempt(at('bridge({transport})'), () => m.bridge({ transport: make(), caller: make(), maxMessageBytes: make() }));
    await attempt(at('use(bridge)'), () => {
      const off = tm.use(m.bridge({ transport: make() }));
      off?.();
    });
    await attempt(at('echoTransport'), () => m.echoTransport(make()));
    await attempt(at('echoTransport({echo})'), () => m.echoTransport({ echo: make(), channel: make() }));
    await attempt(at('websocketTransport'), () => m.websocketTransport(make()));
    await attempt(at('websocketTransport({url})'), () => m.websocketTransport({ url: make(), WebSocket: make() }).close());
    await attempt(at('postMessageTransport'), () => m.postMessageTransport(make()));
    await attempt(at('postMessageTransport({target})'), () => m.postMessageTransport({ target: make(), targetOrigin: make(), allowedOrigins: make() }));
    await attempt(at('createInPageChannel'), () => m.createInPageChannel(make()));
    await attempt(at('webmcp'), () => m.webmcp(make()));
    await attempt(at('use(webmcp)'), () => tm.use(m.webmcp({ modelContext: make() }))?.());
    await attempt(at('formTools(form)'), () => m.formTools(make(), { scope }));
    await attempt(at('formTools(options)'), () => m.formTools(form ?? {}, make()));
    await attempt(at('formTools(scope)'), () => m.formTools(form ?? {}, { scope: make(), sensitive: make(), title: make() }));
    await attempt(at('formTools(sensitive)'), () => m.formTools(form ?? { elements: [], requestSubmit() {} }, { scope: tm.scope(`f${results.length}`), sensitive: make() })?.());
    await attempt(at('postMessageTransport({allowedOrigins})'), () => m.postMessageTransport({ target: { postMessage() {} }, targetOrigin: 'https://a.example', allowedOrigins: make() })?.close());
    results.push(name);
    // The module is still alive after each value.
    await attempt(at('newId after'), () => m.newId());
  }

  // A transport and an agent that are hostile in themselves.
  const { transport, agent } = m.createInPageChannel();
  tm.use(m.bridge({ transport }));
  for (let i = 0; i < 50 && agent.tools.length === 0; i++) await new Promise((r) => setTimeout(r, 0));
  for (const name of names) {
    const h = makers[name]();
    await attempt(`agent.send ← ${name}`, () => agent.send(h));
    // Not awaited: JSON copies an input nested deeper than the page's
    // bound where the engine's stack allows (Chromium: 100k levels), and the
    // page drops such a message unanswered; the agent's timeout covers it.
    // An input JSON cannot copy is refused at once (uncopyableRequests).
    await attempt(`agent.call(input) ← ${name}`, () => {
      agent.call('ret', h).catch(() => {});
    });
  }
  // Tool functions that are hostile in what they return: each call is answered.
  const badPromise = () => {
    const p = Promise.resolve(1);
    Object.defineProperty(p, 'constructor', { get: boom });
    return p;
  };
  const fns = {
    'promise with a throwing constructor': badPromise,
    'thenable whose then getter throws': () => Object.defineProperty({}, 'then', { get: boom, enumerable: true }),
    'thenable whose then throws': () => ({ then: boom }),
    'throwing proxy': () => throwingProxy(),
    'revoked proxy': () => revoked(),
    'array proxy whose get throws': () => new Proxy([1], { get: boom }),
    'deep array 100k': () => deepArray(100_000),
    'cyclic object': cyclicObject,
  };
  const standard = (validate) => ({ '~standard': { version: 1, vendor: 'hostile', validate } });
  let n = 0;
  for (const [name, f] of Object.entries(fns)) {
    const tools = [
      { run: f },
      { run: async () => f() },
      { hints: { consequential: true }, summary: f, run: () => 1 },
      { hints: { consequential: true }, changes: f, run: () => 1 },
      { hints: { consequential: true }, sensitive: ['a'], changes: () => [{ path: 'a', after: f() }], run: () => 1 },
      { snapshot: f, run: () => 1 },
      { snapshot: () => f, run: () => 1 },
      { inputSchema: standard(f), run: () => 1 },
      { inputSchema: standard(() => ({ issues: f() })), run: () => 1 },
      { inputSchema: standard(() => ({ issues: [{ path: f(), message: f() }] })), run: () => 1 },
      { inputSchema: standard(() => ({ value: f() })), run: () => 1 },
      { outputSchema: standard(f), run: () => 1 },
    ];
    for (const def of tools) {
      const tool = `fn${n++}`;
      await attempt(`register ${tool} ← ${name}`, () => tm.register({ name: tool, description: 'd', ...def }));
      await attempt(`call ${tool} ← ${name}`, () => tm.call(tool, {}));
      await attempt(`undo ${tool} ← ${name}`, () => tm.undo('x'));
      await attempt(`confirmPending ${tool} ← ${name}`, async () => {
        for (const pending of tm.pendingConfirmations()) await tm.confirmPending(pending.confirmId, true);
      });
    }
  }
  for (let i = 0; i < 50 && agent.tools.length < n; i++) await new Promise((r) => setTimeout(r, 0));
  for (let i = 0; i < n; i++) {
    await attempt(`agent.call fn${i}`, () => agent.call(`fn${i}`, {}));
  }
  for (const pending of tm.pendingConfirmations()) {
    await attempt(`confirmPending ${pending.tool}`, () => tm.confirmPending(pending.confirmId, true));
  }

  // A result of every hostile value: each call is answered.
  const answers = {};
  for (const name of names) {
    answers[name] = await agent.call('ret', { name });
  }

  // Afterwards: a normal call through the in-page channel, and the helpers.
  tm.register({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, run: (input) => ({ echoed: input }) });
  for (let i = 0; i < 50 && !agent.tools.some((t) => t.name === 'echo'); i++) await new Promise((r) => setTimeout(r, 0));
  const finalCall = await agent.call('echo', { hello: 'world' });
  const helpers = {
    flatten: m.flatten({ a: { b: 1 }, c: [2] }),
    getPath: m.getPath({ items: [{ name: 'tea' }] }, 'items.0.name'),
    setPath: m.setPath({}, 'items.0.name', 'tea'),
    llmName: m.llmName('a.b'),
    id: typeof m.newId(),
  };
  return { report, answers, finalCall, helpers };
}

// The values the transports read from the page's own objects (options,
// a `source`'s events, an Echo channel's broadcasts) and the errors the
// bridge reports, as revoked proxies and proxies whose traps throw,
// thousands of times each: every call throws a clear error or drops the
// value, and none traps the module (an exception passing through its
// frames leaks its stack, which then traps after about 1,600).
async function repeatHostile(m) {
  const boom = () => {
    throw new Error('boom');
  };
  const revoked = (target) => {
    const r = Proxy.revocable(target, {});
    r.revoke();
    return r.proxy;
  };
  const throwing = (target) => new Proxy(target, { get: boom, getOwnPropertyDescriptor: boom, ownKeys: boom, has: boom });
  const ROUNDS = 3000;
  const out = { traps: [], errors: {} };
  const record = (label, f) => {
    for (let i = 0; i < ROUNDS; i++) {
      try {
        f();
        out.errors[label] ??= 'none';
      } catch (error) {
        if (error instanceof WebAssembly.RuntimeError) {
          out.traps.push(`${label}, round ${i}: ${error.message}`);
          return;
        }
        out.errors[label] ??= `${error?.constructor?.name}: ${error?.message}`;
      }
    }
  };
  class FakeSocket {
    addEventListener() {}
    removeEventListener() {}
    close() {}
  }
  for (const [name, codes] of [['revoked', () => revoked([1000])], ['get throws', () => throwing([1000])]]) {
    record(`websocketTransport terminalCloseCodes ${name}`, () => m.websocketTransport({ url: 'ws://localhost:1', WebSocket: FakeSocket, terminalCloseCodes: codes() }).close());
  }
  // postMessage events as a page script can dispatch them (a MessageEvent's
  // data is anything), through a `source` that hands them over.
  let listener;
  const target = { postMessage() {} };
  const transport = m.postMessageTransport({
    target,
    targetOrigin: 'https://a.example',
    allowedOrigins: ['https://a.example'],
    source: { addEventListener: (type, l) => { listener = l; }, removeEventListener() {} },
  });
  const received = [];
  transport.onMessage((message) => received.push(message));
  for (const [name, data] of [['revoked', () => revoked({})], ['revoked array', () => revoked([])], ['traps throw', () => throwing({})]]) {
    record(`postMessage event data ${name}`, () => listener({ source: target, origin: 'https://a.example', data: data() }));
  }
  listener({ source: target, origin: 'https://a.example', data: { toolmark: 1, message: { hello: 1 } } });
  out.postMessageReceived = received;
  // Echo broadcasts: a payload the channel hands to the listener.
  let broadcast;
  const echo = { private: () => ({ listen: (event, l) => { broadcast = l; }, stopListening() {} }), leave() {} };
  const echoed = [];
  const echoTransport = m.echoTransport({ echo, channel: 'toolmark.1', postUrl: typeof location === 'undefined' ? 'https://app.example/toolmark' : '/toolmark' });
  echoTransport.onMessage((message) => echoed.push(message));
  for (const [name, payload] of [['revoked', () => revoked({})], ['revoked array', () => revoked([])], ['traps throw', () => throwing({})]]) {
    record(`echo payload ${name}`, () => broadcast(payload()));
  }
  broadcast({ message: { hello: 2 } });
  out.echoed = echoed;
  // A transport whose onMessage throws an Error behind a proxy: the
  // bridge's report reads its name and message.
  const tm = m.createToolmark({ onError: () => {} });
  const errorProxy = new Proxy(new Error('x'), { get: boom });
  record('bridge transport.onMessage throws a proxy of an Error', () => tm.use(m.bridge({ transport: { send() {}, onMessage() { throw errorProxy; } } })));
  out.id = typeof m.newId();
  return out;
}

function checkRepeated(out) {
  assert.deepEqual(out.traps, [], 'no trap');
  assert.deepEqual(out.errors, {
    'websocketTransport terminalCloseCodes revoked': 'ToolmarkError: websocketTransport: terminalCloseCodes must be an array of integer close codes',
    'websocketTransport terminalCloseCodes get throws': 'ToolmarkError: websocketTransport: terminalCloseCodes must be an array of integer close codes',
    'postMessage event data revoked': 'none',
    'postMessage event data revoked array': 'none',
    'postMessage event data traps throw': 'none',
    'echo payload revoked': 'none',
    'echo payload revoked array': 'none',
    'echo payload traps throw': 'none',
    'bridge transport.onMessage throws a proxy of an Error': 'ToolmarkError: bridge: transport.onMessage failed: [object]',
  });
  assert.deepEqual(out.postMessageReceived, [{ hello: 1 }]);
  assert.deepEqual(out.echoed, [{ hello: 2 }]);
  assert.equal(out.id, 'string');
}

// The in-page agent's requests whose input JSON cannot copy, or whose tool
// name or id is a BigInt, before and after the first manifest: each rejects
// before the next task with a ToolmarkError, and nothing reaches the page.
async function uncopyableRequests(m) {
  const boom = () => {
    throw new Error('boom');
  };
  const cyclic = () => {
    const v = { a: [] };
    v.a.push(v);
    return v;
  };
  const revoked = () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  };
  const inputs = {
    cycle: cyclic,
    BigInt: () => 10n,
    'object holding a BigInt': () => ({ n: 1n }),
    function: () => boom,
    symbol: () => Symbol('s'),
    'throwing getter': () => ({ get a() { return boom(); } }),
    'throwing proxy': () => new Proxy({}, { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom }),
    'revoked proxy': revoked,
    'toJSON that returns undefined': () => ({ toJSON: () => undefined }),
  };
  // How a promise stands once the current task's microtasks have run.
  const state = (promise) => Promise.race([
    promise.then(
      (value) => ({ resolved: value }),
      (error) => ({ rejected: `${error?.name}: ${error?.message}` }),
    ),
    new Promise((resolve) => setTimeout(() => resolve('pending'), 0)),
  ]);
  const errors = [];
  const runs = [];
  const tm = m.createToolmark({ onError: (e) => errors.push(e.code) });
  tm.register({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, run: (input) => { runs.push(input); return input; } });
  const { transport, agent } = m.createInPageChannel();
  const reached = [];
  transport.onMessage((message) => reached.push(message.type));
  const out = { before: {}, after: {} };
  const requests = (into) => Promise.all([
    ...Object.entries(inputs).map(async ([name, make]) => {
      into[name] = await state(agent.call('echo', make()));
    }),
    (async () => { into['tool name BigInt'] = await state(agent.call(10n, {})); })(),
    (async () => { into['options.id BigInt'] = await state(agent.call('echo', {}, { id: 10n })); })(),
    (async () => { into['describe BigInt'] = await state(agent.describe(10n)); })(),
  ]);
  await requests(out.before);
  tm.use(m.bridge({ transport }));
  for (let i = 0; i < 50 && agent.tools.length === 0; i++) await new Promise((r) => setTimeout(r, 0));
  await requests(out.after);
  // Thousands more: no trap, nothing waiting. (A BigInt inside: the same
  // refusal as a cycle's, JSON.stringify's TypeError; a cycle's takes about
  // 20 ms each in the Chromium these tests drive through Playwright.)
  for (let i = 0; i < 3000; i++) {
    const got = await state(agent.call('echo', { n: BigInt(i) }));
    if (!/^ToolmarkError: /.test(got.rejected)) {
      out.other = `call ${i}: ${JSON.stringify(got)}`;
      break;
    }
  }
  out.ok = await agent.call('echo', { hello: 'world' });
  out.reached = reached;
  out.runs = runs.length;
  out.errors = errors;
  return out;
}

function checkUncopyable(out) {
  const input = (detail) => ({ rejected: `ToolmarkError: createInPageChannel: agent.call: the input is not JSON-copyable${detail}` });
  for (const when of ['before', 'after']) {
    const got = out[when];
    for (const name of ['cycle', 'BigInt', 'object holding a BigInt', 'throwing getter', 'throwing proxy', 'revoked proxy']) {
      assert.match(got[name]?.rejected ?? JSON.stringify(got[name]), /^ToolmarkError: createInPageChannel: agent\.call: the input is not JSON-copyable \(\w*Error: .+\)$/s, `${when}: ${name}`);
    }
    assert.deepEqual(got.function, input(' (a function)'), `${when}: function`);
    assert.deepEqual(got.symbol, input(' (a symbol)'), `${when}: symbol`);
    assert.deepEqual(got['toJSON that returns undefined'], input(''), `${when}: toJSON`);
    const misshapen = (what) => ({ rejected: `ToolmarkError: createInPageChannel: ${what} must be a non-empty string (got 10n)` });
    assert.deepEqual(got['tool name BigInt'], misshapen('agent.call: the tool name'), `${when}: tool name`);
    assert.deepEqual(got['options.id BigInt'], misshapen('agent.call: options.id'), `${when}: options.id`);
    assert.deepEqual(got['describe BigInt'], misshapen('agent.describe: the tool name'), `${when}: describe`);
  }
  assert.equal(out.other, undefined);
  // Only the last call reached the page, and it ran once.
  assert.deepEqual(out.reached, ['call']);
  assert.equal(out.runs, 1);
  assert.deepEqual(out.errors, []);
  assert.deepEqual(out.ok, { status: 'ok', data: { hello: 'world' } });
}

function check({ report, answers, finalCall, helpers }) {
  assert.deepEqual(report.traps, [], 'no call traps the module');
  assert.deepEqual(report.nonErrors, [], 'every throw is an Error');
  assert.deepEqual(report.unsettled, [], 'every promise settles');
  assert.deepEqual(report.slow, [], 'no call blocks for seconds');
  assert.ok(report.calls > 900, `${report.calls} calls`);
  for (const [name, answer] of Object.entries(answers)) {
    assert.ok(['ok', 'error'].includes(answer.status), `${name}: ${JSON.stringify(answer)}`);
  }
  // JSON.stringify cannot write these (its own stack, cycles, BigInt, a throwing toJSON…).
  for (const name of ['deep array 100k', 'deep object 100k', 'cyclic object', 'cyclic array', 'bigint', 'object holding a BigInt', 'symbol', 'function', 'NaN', 'object with a throwing toJSON']) {
    assert.deepEqual(answers[name], { status: 'error', message: 'Result not serializable' }, name);
  }
  // Reading their `then` throws, so awaiting them rejects: the run failed.
  for (const name of ['throwing proxy', 'revoked proxy']) {
    assert.deepEqual(answers[name], { status: 'error', message: 'Tool failed' }, name);
  }
  assert.deepEqual(answers['huge string'], { status: 'ok', data: 'x'.repeat(1 << 23) });
  assert.deepEqual(answers.undefined, { status: 'ok' });
  assert.deepEqual(answers.null, { status: 'ok', data: null });
  assert.deepEqual(finalCall, { status: 'ok', data: { echoed: { hello: 'world' } } });
  assert.deepEqual(helpers, {
    flatten: { 'a.b': 1, 'c.0': 2 },
    getPath: 'tea',
    setPath: { items: [{ name: 'tea' }] },
    llmName: 'a__b',
    id: 'string',
  });
}

// Results as JSON.stringify writes them: nesting up to the documented
// bound (1000 levels), lone surrogates (text cut through an emoji).
async function resultsAsJsonWrites(m) {
  const nested = (n) => {
    let v = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const values = {
    deep200: nested(200),
    deep1000: nested(1000),
    deep1001: nested(1001),
    cut: { text: 'party 🎉'.slice(0, 7), tail: '🎉'.slice(1), both: '\udfff\ud800' },
  };
  const errors = [];
  const tm = m.createToolmark({ onError: (e) => errors.push([e.code, e.tool]) });
  tm.register({ name: 'give', description: 'Gives a value', inputSchema: { type: 'object' }, run: ({ name }) => values[name] });
  const { transport, agent } = m.createInPageChannel();
  tm.use(m.bridge({ transport }));
  for (let i = 0; i < 50 && agent.tools.length === 0; i++) await new Promise((r) => setTimeout(r, 0));
  const out = {};
  for (const name of Object.keys(values)) {
    const viaAgent = await agent.call('give', { name });
    const viaPage = await tm.call('give', { name });
    out[name] = {
      agent: viaAgent.status === 'ok' ? JSON.stringify(viaAgent.data) === JSON.stringify(values[name]) : viaAgent,
      page: viaPage.status === 'ok' ? JSON.stringify(viaPage.data) === JSON.stringify(values[name]) : viaPage,
    };
    if (name === 'cut') out.cutText = [viaAgent.data?.text, viaPage.data?.text, viaAgent.data?.both];
  }
  return { out, errors };
}

function checkResults({ out, errors }) {
  for (const name of ['deep200', 'deep1000', 'cut']) assert.deepEqual(out[name], { agent: true, page: true }, name);
  const refused = { status: 'error', message: 'Result not serializable' };
  assert.deepEqual(out.deep1001, { agent: refused, page: refused });
  assert.deepEqual(out.cutText, ['party \ud83c', 'party \ud83c', '\udfff\ud800']);
  assert.deepEqual(errors, [['transport_failed', 'give'], ['transport_failed', 'give']]);
}

test('Node: the path helpers bound depth, length, cycles and work; past a bound invalid_path, never a trap', async () => {
  const { flatten, getPath, setPath, newId, ToolmarkError } = await nodeExports();
  const invalidPath = (pattern) => (error) => error instanceof ToolmarkError && error.code === 'invalid_path' && pattern.test(error.message);
  const path = (n) => Array(n).fill('a').join('.');
  // The route from the issue: an agent's 8,000-segment path, then flatten.
  assert.throws(() => setPath({}, path(8000), 1), invalidPath(/more than 1000 segments/));
  const draft = setPath({}, path(1000), 1);
  assert.equal(getPath(draft, path(1000)), 1);
  assert.throws(() => getPath(draft, path(1001)), invalidPath(/more than 1000 segments/));
  assert.deepEqual(flatten(draft), { [path(1000)]: 1 });
  let deeper = draft;
  for (let i = 0; i < 7000; i++) deeper = { a: deeper };
  assert.throws(() => flatten(deeper), invalidPath(/nested deeper than 1000 levels/));
  // Cycles: refused at once; a value shared by siblings is no cycle.
  const cyclic = { a: { b: [1] } };
  cyclic.a.b.push(cyclic.a);
  assert.throws(() => flatten(cyclic), invalidPath(/value at "a.b.1" contains itself/));
  const shared = { n: 1 };
  assert.deepEqual(flatten({ x: shared, y: [shared] }), { 'x.n': 1, 'y.0.n': 1 });
  // Shared parts with 2^40 paths: stopped by the work bound, not left to run.
  let dag = { leaf: 1 };
  for (let i = 0; i < 40; i++) dag = { x: dag, y: dag };
  assert.throws(() => flatten(dag), invalidPath(/more than 20000 parts/));
  assert.throws(() => getPath({}, 'a'.repeat((1 << 20) + 1)), invalidPath(/longer than/));
  // A proxy's throwing trap, thousands of times: the page's error each time,
  // and the module's stack is not leaked (a throw through its frames trapped after ~1,300).
  const proxy = new Proxy({}, { ownKeys: () => { throw new Error('boom'); }, getOwnPropertyDescriptor: () => { throw new Error('boom'); }, get: () => { throw new Error('boom'); } });
  for (let i = 0; i < 20_000; i++) {
    assert.throws(() => flatten({ a: { b: { c: proxy } } }), /boom/);
    assert.throws(() => getPath({ a: { b: proxy } }, 'a.b.c'), /boom/);
    assert.throws(() => setPath({ a: { b: proxy } }, 'a.b.c', 1), /boom/);
  }
  assert.equal(typeof newId(), 'string');
  assert.deepEqual(flatten({ a: { b: 1 } }), { 'a.b': 1 });
});

test('Node: formTools on FormElementLike objects, plain and with throwing getters, thousands of times: no trap', async () => {
  const { createToolmark, formTools, newId } = await nodeExports();
  const { createInPageChannel } = await import(new URL('../../pkg/bridge/in-page.js', import.meta.url));
  const { bridge } = await import(new URL('../../pkg/bridge/index.js', import.meta.url));
  const boom = () => {
    throw new Error('boom');
  };
  // A form without a DOM: plain objects with the properties formTools reads.
  const plain = () => {
    const email = { tagName: 'INPUT', name: 'email', type: 'email', value: '', defaultValue: '' };
    const pin = { tagName: 'INPUT', name: 'pin', type: 'password', value: '1234', defaultValue: '' };
    return { form: { elements: [email, pin], requestSubmit() {} }, email };
  };
  const tm = createToolmark({ onError: () => {} });
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  const { form, email } = plain();
  formTools(form, { scope: tm.scope('plain') });
  for (let i = 0; i < 50 && agent.tools.length < 3; i++) await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(await agent.call('plain.fill', { email: 'ann@example.com' }), { status: 'ok', data: { filled: ['email'] } });
  assert.equal(email.value, 'ann@example.com');
  assert.deepEqual(await agent.call('plain.read', {}), { status: 'ok', data: { email: 'ann@example.com', pin: '[redacted]' } });
  // Every property the form code reads throws, on the form and its elements.
  const hostileElement = () => new Proxy({ tagName: 'INPUT', name: 'x', type: 'text' }, {
    get: (target, key) => (key === 'tagName' || key === 'name' || key === 'type' ? target[key] : boom()),
    set: boom,
  });
  const forms = [
    () => ({ elements: [hostileElement()], requestSubmit() {}, getAttribute: boom }),
    () => ({ elements: new Proxy([], { get: boom }), requestSubmit() {} }),
    () => ({ get elements() { return [hostileElement(), { tagName: 'SELECT', name: 's', type: 'select-one', get options() { return boom(); } }]; }, requestSubmit: boom }),
  ];
  for (let i = 0; i < 3000; i++) {
    const make = forms[i % forms.length];
    const scope = tm.scope(`h${i}`);
    try {
      const off = formTools(make(), { scope });
      off();
    } catch (error) {
      assert.ok(!(error instanceof WebAssembly.RuntimeError), `trap at ${i}: ${error.message}`);
    }
  }
  const sometimes = tm.scope('tools');
  formTools(forms[0](), { scope: sometimes });
  formTools(forms[2](), { scope: tm.scope('tools2') });
  for (let i = 0; i < 50 && !agent.tools.some((t) => t.name === 'tools2.submit'); i++) await new Promise((r) => setTimeout(r, 0));
  for (let i = 0; i < 500; i++) {
    for (const tool of ['tools.fill', 'tools.read', 'tools2.fill', 'tools2.read', 'tools2.submit']) {
      const result = await agent.call(tool, tool.endsWith('fill') ? { x: 'y' } : {});
      assert.ok(result.status, JSON.stringify(result));
    }
  }
  assert.equal(typeof newId(), 'string');
});

test('Node: results nested 1000 deep and strings with lone surrogates come back as JSON.stringify writes them', async () => {
  checkResults(await resultsAsJsonWrites(await nodeExports()));
});

const ENTRIES = {
  '': ['createToolmark', 'ToolmarkError', 'newId', 'llmName', 'getPath', 'setPath', 'flatten', 'formTools'],
  'bridge/index.js': ['bridge'],
  'bridge/echo.js': ['echoTransport'],
  'bridge/websocket.js': ['websocketTransport'],
  'bridge/post-message.js': ['postMessageTransport'],
  'bridge/in-page.js': ['createInPageChannel'],
  'protocol/index.js': ['validateMessage', 'protocolSchemas', 'PROTOCOL_VERSION'],
  'webmcp/index.js': ['webmcp'],
};

async function nodeExports() {
  const m = {};
  for (const [entry, names] of Object.entries(ENTRIES)) {
    const module = await import(new URL(`../../pkg/${entry || 'index.js'}`, import.meta.url));
    for (const name of names) m[name] = module[name];
  }
  return m;
}

test('Node: every export driven with hostile values; no trap, and the bridge still answers', async () => {
  const m = await nodeExports();
  for (const names of Object.values(ENTRIES)) for (const name of names) assert.notEqual(m[name], undefined, name);
  check(await driveHostile(m));
});

test('Node: values read from the page\'s objects, hostile thousands of times: a clear error or a dropped value, never a trap', async () => {
  checkRepeated(await repeatHostile(await nodeExports()));
});

test('Node: the in-page agent\'s requests JSON cannot copy reject at once with a ToolmarkError invalid_argument, and nothing is sent', async () => {
  checkUncopyable(await uncopyableRequests(await nodeExports()));
});

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>hostile exports</title>
<script type="module">
  const entries = ${JSON.stringify(ENTRIES)};
  const m = {};
  for (const [entry, names] of Object.entries(entries)) {
    const module = await import('/pkg/' + (entry || 'index.js'));
    for (const name of names) m[name] = module[name];
  }
  window.m = m;
  window.ready = true;
</script>`;

let server;
let browser;

before(async () => {
  server = await serve(root, { '/hostile.html': PAGE });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('Chromium: results nested 1000 deep and strings with lone surrogates come back as JSON.stringify writes them', async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/hostile.html`);
  await page.waitForFunction(() => window.ready === true);
  checkResults(await page.evaluate(`(${resultsAsJsonWrites.toString()})(window.m)`));
});

test('Chromium: every export driven with hostile values; no trap, and the bridge still answers', async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/hostile.html`);
  await page.waitForFunction(() => window.ready === true);
  const out = await page.evaluate(`(${driveHostile.toString()})(window.m)`);
  check(out);
  // A hostile function taken as a listener (tm.events.on, subscribePending)
  // throws its own error when called: reported as uncaught, as a DOM
  // listener's is. Nothing else reaches the page (no trap, no error of ours).
  assert.deepEqual(page.errors.map(String).filter((error) => error !== 'Error: boom'), []);
});

test('Chromium: values read from the page\'s objects, hostile thousands of times: a clear error or a dropped value, never a trap', async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/hostile.html`);
  await page.waitForFunction(() => window.ready === true);
  checkRepeated(await page.evaluate(`(${repeatHostile.toString()})(window.m)`));
});

test('Chromium: the in-page agent\'s requests JSON cannot copy reject at once with a ToolmarkError invalid_argument, and nothing is sent', async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/hostile.html`);
  await page.waitForFunction(() => window.ready === true);
  checkUncopyable(await page.evaluate(`(${uncopyableRequests.toString()})(window.m)`));
});
