// The slim entry (@toolmark/bridge-wasm/slim): the module from its own .wasm
// file, compiled by `initialize(source)` from each kind of source it takes, in
// Node and in Chromium (served as application/wasm: compileStreaming). Before
// `initialize` resolves, every function export throws, saying so; after, the
// exports are the package's own (one ToolmarkError class) and work. A bad
// source of any kind (not a module, the wrong module, one that fails once
// instantiated, a failed fetch) is refused (the wrong module with
// invalid_argument, the others with module_unavailable naming what was given)
// and leaves the entry as if `initialize` had never been called.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chromiumWithServer } from './support/browser.mjs';

const pkgUrl = new URL('../../pkg/', import.meta.url);
const wasmUrl = new URL('slim/toolmark_bridge.wasm', pkgUrl);
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('the slim entry exports every name of the other entries, and initialize', async () => {
  const manifest = JSON.parse(readFileSync(new URL('package.json', pkgUrl), 'utf8'));
  const slim = await import(new URL('slim.js', pkgUrl).href);
  const expected = new Set(['initialize']);
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (subpath === './slim' || subpath === './react' || typeof target !== 'object') continue;
    for (const name of Object.keys(await import(new URL(target.default, pkgUrl).href))) expected.add(name);
  }
  assert.deepEqual(Object.keys(slim).sort(), [...expected].sort());
  assert.equal(manifest.exports['./toolmark_bridge.wasm'], './slim/toolmark_bridge.wasm');
});

// Each in a fresh Node: the entry initializes once per process.
const SOURCES = {
  bytes: 'readFileSync(wasmFile)',
  'a typed array view': 'new Uint8Array(readFileSync(wasmFile))',
  'a WebAssembly.Module': 'new WebAssembly.Module(readFileSync(wasmFile))',
  'a Response (streaming)': "new Response(readFileSync(wasmFile), { headers: { 'content-type': 'application/wasm' } })",
  'a promise of a Response without the wasm type': 'Promise.resolve(new Response(readFileSync(wasmFile)))',
};

for (const [kind, expression] of Object.entries(SOURCES)) {
  test(`initialize from ${kind} (Node)`, () => {
    const script = `
      import { readFileSync } from 'node:fs';
      const wasmFile = new URL(${JSON.stringify(wasmUrl.href)});
      const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
      const inline = await import(${JSON.stringify(new URL('protocol/index.js', pkgUrl).href)});
      let before;
      try { slim.createToolmark(); } catch (error) { before = error.message; }
      const valueBefore = slim.PROTOCOL_VERSION;
      const first = slim.initialize(${expression});
      const again = slim.initialize(new Uint8Array(0));
      await first;
      let toolmarkError;
      try { slim.getPath({}, Array(1001).fill('a').join('.')); } catch (error) { toolmarkError = error instanceof slim.ToolmarkError && error.code; }
      console.log(JSON.stringify({
        before, valueBefore, same: first === again,
        id: slim.newId(), version: slim.PROTOCOL_VERSION,
        schemas: JSON.stringify(slim.protocolSchemas) === JSON.stringify(inline.protocolSchemas),
        valid: slim.validateMessage({ protocol: 1, type: 'cancel', clientId: 'c', id: 'x' }, 'toPage').ok,
        toolmarkError,
      }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
    assert.match(out.before, /^@toolmark\/bridge-wasm\/slim: createToolmark used before initialize\(\) resolved/);
    assert.equal(out.valueBefore, 1, "the constants are plain values, there before initialize");
    assert.equal(out.same, true);
    assert.match(out.id, UUID_V4);
    assert.equal(out.version, 1);
    assert.equal(out.schemas, true);
    assert.equal(out.valid, true);
    assert.equal(out.toolmarkError, 'invalid_path');
  });
}

test('a failed initialize rejects with module_unavailable naming what it was given, the host\'s error as cause, and may be tried again (Node)', () => {
  const script = `
    import { createServer } from 'node:net';
    import { readFileSync } from 'node:fs';
    const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
    const described = (error) => ({ toolmarkError: error instanceof slim.ToolmarkError, code: error.code, message: error.message, cause: error.cause?.name });
    const attempt = (source) => slim.initialize(source).then(() => 'resolved', described);
    // A loopback port nothing listens on: the fetch is refused.
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const closed = 'http://127.0.0.1:' + server.address().port + '/toolmark_bridge.wasm';
    await new Promise((resolve) => server.close(resolve));
    const failures = {
      bytes: await attempt(new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9])),
      url: await attempt(closed),
      promise: await attempt(Promise.reject(new TypeError('Failed to fetch'))),
    };
    await slim.initialize(readFileSync(new URL(${JSON.stringify(wasmUrl.href)})));
    console.log(JSON.stringify({ failures, closed, id: slim.newId() }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  const { bytes, url, promise } = out.failures;
  for (const failure of [bytes, url, promise]) {
    assert.equal(failure.toolmarkError, true);
    assert.equal(failure.code, 'module_unavailable');
    assert.match(failure.message, /: serve or pass the file exported as "@toolmark\/bridge-wasm\/toolmark_bridge\.wasm"$/);
  }
  assert.match(bytes.message, /^@toolmark\/bridge-wasm\/slim: initialize\(\) loading the bytes given failed \(CompileError: WebAssembly\.compile\(\)/);
  assert.equal(bytes.cause, 'CompileError');
  assert.ok(url.message.startsWith(`@toolmark/bridge-wasm/slim: initialize() loading ${out.closed} failed (TypeError: fetch failed)`), url.message);
  assert.equal(url.cause, 'TypeError');
  assert.match(promise.message, /initialize\(\) loading its argument failed \(TypeError: Failed to fetch\)/);
  assert.equal(promise.cause, 'TypeError');
  assert.match(out.id, UUID_V4);
});

/**
 * The bytes of a module of exactly `imports` (functions) and `exports` (as
 * WebAssembly.Module lists them), every function empty, or with `trap`
 * every function `unreachable`: then a module that passes every check on
 * names and kinds and still fails once instantiated (its start traps).
 */
function moduleOf({ imports, exports, trap }) {
  const u32 = (n) => {
    const out = [];
    do {
      let byte = n & 0x7f;
      n >>>= 7;
      if (n) byte |= 0x80;
      out.push(byte);
    } while (n);
    return out;
  };
  const name = (text) => {
    const utf8 = [...Buffer.from(text)];
    return [...u32(utf8.length), ...utf8];
  };
  const vector = (items) => [...u32(items.length), ...items.flat()];
  const section = (id, items) => {
    const body = vector(items);
    return [id, ...u32(body.length), ...body];
  };
  const of = (kind) => exports.filter((entry) => entry.kind === kind);
  const KIND = { function: 0, table: 1, memory: 2, global: 3 };
  const index = { function: imports.length, table: 0, memory: 0, global: 0 };
  const body = (entry) => {
    const code = [0x00, ...(trap ? [0x00] : []), 0x0b]; // no locals, [unreachable], end
    return [...u32(code.length), ...code];
  };
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [[0x60, 0x00, 0x00]]), // one type: () -> ()
    ...section(2, imports.map((entry) => [...name(entry.module), ...name(entry.name), 0x00, 0x00])),
    ...section(3, of('function').map(() => [0x00])),
    ...section(4, of('table').map(() => [0x6f, 0x00, 0x00])), // externref, at least 0
    ...section(5, of('memory').map(() => [0x00, 0x01])), // at least one page
    ...section(6, of('global').map(() => [0x7f, 0x00, 0x41, 0x00, 0x0b])), // const i32 0
    ...section(7, ['function', 'table', 'memory', 'global'].flatMap((kind) => of(kind).map((entry) => [...name(entry.name), KIND[kind], ...u32(index[kind]++)]))),
    ...section(10, of('function').map(body)),
  ]);
}

const real = new WebAssembly.Module(readFileSync(wasmUrl));
const realImports = WebAssembly.Module.imports(real);
const realExports = WebAssembly.Module.exports(real);
// The module's one memory (its exports' names are minified by the build).
const realMemory = realExports.find((entry) => entry.kind === 'memory').name;
/** Every kind of module initialize must refuse, as bytes, and the refusal each gets. */
const WRONG_MODULES = {
  'a valid, empty module': [new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]), /^invalid_argument: .*is not the toolmark_bridge\.wasm of this version of the package \(it lacks (\d+) of the \1 exports the package calls, /],
  'a module of another shape (one export f)': [moduleOf({ imports: [], exports: [{ name: 'f', kind: 'function' }] }), /^invalid_argument: .*is not the toolmark_bridge\.wasm of this version of the package \(it lacks (\d+) of the \1 exports/],
  'this version\'s exports with a memory that is a function': [
    moduleOf({ imports: realImports, exports: realExports.map((entry) => (entry.name === realMemory ? { name: realMemory, kind: 'function' } : entry)) }),
    new RegExp(`^invalid_argument: .*is not the toolmark_bridge\\.wasm of this version of the package \\(it lacks 1 of the \\d+ exports the package calls, ${realMemory}\\)`),
  ],
  'this version\'s exports with another version\'s imports': [
    moduleOf({ imports: [...realImports, { module: './toolmark_bridge_bg.js', name: '__wbg_gone_0123456789abcdef', kind: 'function' }], exports: realExports }),
    /^invalid_argument: .*is not the toolmark_bridge\.wasm of this version of the package \(its exports and imports differ\)/,
  ],
  'this version\'s exports and imports, with a start that traps': [
    moduleOf({ imports: realImports, exports: realExports, trap: true }), // every function traps, the start among them
    /^module_unavailable: @toolmark\/bridge-wasm\/slim: instantiating the module given to initialize\(\) failed \(RuntimeError: unreachable/,
  ],
  'garbage bytes': [new Uint8Array([1, 2, 3]), /^module_unavailable: @toolmark\/bridge-wasm\/slim: initialize\(\) loading the bytes given failed \(CompileError: WebAssembly\.compile\(\)/],
  'empty input': [new Uint8Array(0), /^module_unavailable: @toolmark\/bridge-wasm\/slim: initialize\(\) loading the bytes given failed \(CompileError: WebAssembly\.compile\(\)/],
};

test('the trapping module is this version\'s in every name and kind (what makes it pass the checks)', () => {
  const [bytes] = WRONG_MODULES['this version\'s exports and imports, with a start that traps'];
  const module = new WebAssembly.Module(bytes);
  const list = (entries) => entries.map((entry) => JSON.stringify(entry)).sort();
  assert.deepEqual(list(WebAssembly.Module.exports(module)), list(realExports));
  assert.deepEqual(list(WebAssembly.Module.imports(module)), list(realImports));
});

test('bad sources of every kind are refused, each leaving the entry as if never initialized; then the real module works (Node)', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
    const real = () => readFileSync(new URL(${JSON.stringify(wasmUrl.href)}));
    const attempt = (source) => slim.initialize(source).then(() => 'resolved', (error) => error.code + ': ' + error.message);
    const unready = () => { try { slim.newId(); return 'ready'; } catch (error) { return error.message; } };
    const refusals = {};
    for (const [kind, base64] of ${JSON.stringify(Object.entries(WRONG_MODULES).map(([kind, [bytes]]) => [kind, Buffer.from(bytes).toString('base64')]))}) {
      refusals[kind] = [await attempt(new Uint8Array(Buffer.from(base64, 'base64'))), unready()];
    }
    refusals['a WebAssembly.Module of the wrong shape'] = [await attempt(new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))), unready()];
    await slim.initialize(real());
    const tm = slim.createToolmark();
    tm.register({ name: 'greet', description: 'Greets.', run: ({ name }) => ({ text: 'hi ' + name }) });
    console.log(JSON.stringify({
      refusals,
      id: slim.newId(),
      flat: slim.flatten({ a: [1, { b: 'two' }] }),
      call: await tm.call('greet', { name: 'slim' }),
    }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  const unready = /^@toolmark\/bridge-wasm\/slim: newId used before initialize\(\) resolved/;
  for (const [kind, [, refusal]] of Object.entries(WRONG_MODULES)) {
    assert.match(out.refusals[kind][0], refusal, kind);
    assert.match(out.refusals[kind][1], unready, kind);
  }
  assert.match(out.refusals['a WebAssembly.Module of the wrong shape'][0], WRONG_MODULES['a valid, empty module'][1]);
  assert.match(out.id, UUID_V4);
  assert.deepEqual(out.flat, { 'a.0': 1, 'a.1.b': 'two' });
  assert.deepEqual(out.call, { status: 'ok', data: { text: 'hi slim' } });
});

test('concurrent calls share the first call\'s outcome: two good ones one result, a bad one then a good one both refused, and a later call tries again (Node)', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
    const real = () => readFileSync(new URL(${JSON.stringify(wasmUrl.href)}));
    const attempt = (promise) => promise.then(() => 'resolved', (error) => error.message);
    const bad = new Uint8Array(Buffer.from(${JSON.stringify(Buffer.from(WRONG_MODULES['this version\'s exports and imports, with a start that traps'][0]).toString('base64'))}, 'base64'));
    const badFirst = [slim.initialize(bad), slim.initialize(real())];
    const together = await Promise.all(badFirst.map(attempt));
    const first = slim.initialize(real());
    const second = slim.initialize(real());
    const results = await Promise.all([first, second]);
    console.log(JSON.stringify({ together, sharedBad: badFirst[0] === badFirst[1], same: first === second, results: results.map((value) => typeof value), id: slim.newId() }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  checkConcurrent(out);
});

/**
 * What the concurrency scenario reports, in Node and in Chromium: a trapping
 * module and the real one called together share one promise and its
 * rejection; then two calls with the real module share one success.
 */
function checkConcurrent(out) {
  assert.equal(out.sharedBad, true);
  assert.match(out.together[0], /unreachable/);
  assert.equal(out.together[1], out.together[0]);
  assert.equal(out.same, true);
  assert.deepEqual(out.results, ['undefined', 'undefined']);
  assert.match(out.id, UUID_V4);
}

const chromium = chromiumWithServer({
  pages: {
    '/blank.html': '<!doctype html><title>blank</title>',
    '/html-as-wasm': { type: 'application/wasm', body: '<!doctype html><p>not a module</p>' },
    '/empty.wasm': { type: 'application/wasm', body: Buffer.from(WRONG_MODULES['a valid, empty module'][0]) },
    '/trap.wasm': { type: 'application/wasm', body: Buffer.from(WRONG_MODULES['this version\'s exports and imports, with a start that traps'][0]) },
  },
});

test('bad sources of every kind are refused, each leaving the entry as if never initialized; then the real module works (Chromium)', async () => {
  const page = await chromium.open('/blank.html');
  const out = await page.evaluate(async (wrong) => {
    const slim = await import('/pkg/slim.js');
    const attempt = (source) => slim.initialize(source).then(() => 'resolved', (error) => `${error.code}: ${error.message}`);
    const unready = () => { try { slim.newId(); return 'ready'; } catch (error) { return error.message; } };
    const refusals = {};
    for (const [kind, bytes] of wrong) refusals[kind] = [await attempt(new Uint8Array(bytes)), unready()];
    for (const [kind, source] of [
      ['an empty module served as wasm', '/empty.wasm'],
      ['a trapping module served as wasm, as a fetch promise', fetch('/trap.wasm')],
      ['HTML served as wasm', '/html-as-wasm'],
      ['a 404', '/no-such.wasm'],
    ]) refusals[kind] = [await attempt(source), unready()];
    await slim.initialize('/pkg/slim/toolmark_bridge.wasm');
    const tm = slim.createToolmark();
    const { transport, agent } = slim.createInPageChannel();
    tm.use(slim.bridge({ transport }));
    tm.register({ name: 'greet', description: 'Greets.', run: ({ name }) => ({ text: `hi ${name}` }) });
    return { refusals, id: slim.newId(), result: await agent.call('greet', { name: 'slim' }) };
  }, Object.entries(WRONG_MODULES).map(([kind, [bytes]]) => [kind, [...bytes]]));
  const unready = /^@toolmark\/bridge-wasm\/slim: newId used before initialize\(\) resolved/;
  const expected = {
    ...Object.fromEntries(Object.entries(WRONG_MODULES).map(([kind, [, refusal]]) => [kind, refusal])),
    'an empty module served as wasm': WRONG_MODULES['a valid, empty module'][1],
    'a trapping module served as wasm, as a fetch promise': WRONG_MODULES['this version\'s exports and imports, with a start that traps'][1],
    'HTML served as wasm': /^module_unavailable: @toolmark\/bridge-wasm\/slim: initialize\(\) loading http:\/\/[^ ]+\/html-as-wasm failed \(CompileError: WebAssembly\.compileStreaming\(\)/,
    'a 404': /^module_unavailable: @toolmark\/bridge-wasm\/slim: fetching the module failed: HTTP 404/,
  };
  assert.deepEqual(Object.keys(out.refusals), Object.keys(expected));
  for (const [kind, refusal] of Object.entries(expected)) {
    assert.match(out.refusals[kind][0], refusal, kind);
    assert.match(out.refusals[kind][1], unready, kind);
  }
  assert.match(out.id, UUID_V4);
  assert.deepEqual(out.result, { status: 'ok', data: { text: 'hi slim' } });
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('concurrent calls share the first call\'s outcome, then a later call tries again (Chromium)', async () => {
  const page = await chromium.open('/blank.html');
  const out = await page.evaluate(async () => {
    const slim = await import('/pkg/slim.js');
    const attempt = (promise) => promise.then(() => 'resolved', (error) => error.message);
    const badFirst = [slim.initialize('/trap.wasm'), slim.initialize('/pkg/slim/toolmark_bridge.wasm')];
    const together = await Promise.all(badFirst.map(attempt));
    const first = slim.initialize('/pkg/slim/toolmark_bridge.wasm');
    const second = slim.initialize('/pkg/slim/toolmark_bridge.wasm');
    const results = await Promise.all([first, second]);
    return { together, sharedBad: badFirst[0] === badFirst[1], same: first === second, results: results.map((value) => typeof value), id: slim.newId() };
  });
  checkConcurrent(out);
  await page.close();
});

test('initialize from the served .wasm URL streams it and the bridge works (Chromium)', async () => {
  const page = await chromium.open('/blank.html');
  const out = await page.evaluate(async () => {
    const slim = await import('/pkg/slim.js');
    let before;
    try { slim.bridge({}); } catch (error) { before = error.message; }
    const streamed = [];
    const compileStreaming = WebAssembly.compileStreaming;
    WebAssembly.compileStreaming = (source) => { streamed.push(true); return compileStreaming.call(WebAssembly, source); };
    await slim.initialize('/pkg/slim/toolmark_bridge.wasm');
    const tm = slim.createToolmark();
    const { transport, agent } = slim.createInPageChannel();
    tm.use(slim.bridge({ transport }));
    tm.register({ name: 'greet', description: 'Greets.', run: ({ name }) => ({ text: `hi ${name}` }) });
    for (let i = 0; i < 100 && !agent.tools.some((tool) => tool.name === 'greet'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { before, streamed: streamed.length, result: await agent.call('greet', { name: 'slim' }) };
  });
  assert.deepEqual(page.errors.map(String), []);
  assert.match(out.before, /bridge used before initialize\(\) resolved/);
  assert.equal(out.streamed, 1);
  assert.deepEqual(out.result, { status: 'ok', data: { text: 'hi slim' } });
});
