// The slim entry (@toolmark/bridge-wasm/slim): the module from its own .wasm
// file, compiled by `initialize(source)` from each kind of source it takes, in
// Node and in Chromium (served as application/wasm: compileStreaming). Before
// `initialize` resolves, every function export throws, saying so; after, the
// exports are the package's own (one ToolmarkError class) and work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chromiumWithServer } from './support/browser.mjs';

const pkgUrl = new URL('../../pkg/', import.meta.url);
const wasmUrl = new URL('wasm/toolmark_bridge.wasm', pkgUrl);
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
  assert.equal(manifest.exports['./toolmark_bridge.wasm'], './wasm/toolmark_bridge.wasm');
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

test('a failed initialize rejects with the cause and may be tried again (Node)', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
    let failure;
    await slim.initialize(new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9])).catch((error) => { failure = error.name; });
    await slim.initialize(readFileSync(new URL(${JSON.stringify(wasmUrl.href)})));
    console.log(JSON.stringify({ failure, id: slim.newId() }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.equal(out.failure, 'CompileError');
  assert.match(out.id, UUID_V4);
});

test('bad sources of every kind are refused, then the real module initializes (Node)', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    const slim = await import(${JSON.stringify(new URL('slim.js', pkgUrl).href)});
    const real = () => readFileSync(new URL(${JSON.stringify(wasmUrl.href)}));
    const attempt = (source) => slim.initialize(source).then(() => 'resolved', (error) => error.message);
    const refusals = [];
    // A valid, empty module; a module of another shape (one export); garbage; nothing.
    refusals.push(await attempt(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])));
    refusals.push(await attempt(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 4, 1, 2, 0, 11])));
    refusals.push(await attempt(new Uint8Array([1, 2, 3])));
    refusals.push(await attempt(new Uint8Array(0)));
    // Concurrent calls share the first call's outcome: a bad one then a good one both fail…
    const together = await Promise.all([attempt(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])), attempt(real())]);
    // …and two good ones both succeed, once.
    const first = slim.initialize(real());
    const second = slim.initialize(real());
    await Promise.all([first, second]);
    console.log(JSON.stringify({ refusals, together, same: first === second, id: slim.newId() }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  const shape = /^@toolmark\/bridge-wasm\/slim: the module given to initialize\(\) is not the toolmark_bridge.wasm of this version of the package/;
  assert.match(out.refusals[0], shape);
  assert.match(out.refusals[1], shape);
  assert.match(out.refusals[2], /^WebAssembly\.compile\(\)/);
  assert.match(out.refusals[3], /^WebAssembly\.compile\(\)/);
  assert.match(out.together[0], shape);
  assert.equal(out.together[1], out.together[0]);
  assert.equal(out.same, true);
  assert.match(out.id, UUID_V4);
});

const EMPTY_MODULE = Buffer.from([0, 97, 115, 109, 1, 0, 0, 0]);
const chromium = chromiumWithServer({
  pages: {
    '/blank.html': '<!doctype html><title>blank</title>',
    '/html-as-wasm': { type: 'application/wasm', body: '<!doctype html><p>not a module</p>' },
    '/empty.wasm': { type: 'application/wasm', body: EMPTY_MODULE },
  },
});

test('a wrong module, HTML served as wasm and a 404 are refused; then the real module works (Chromium)', async () => {
  const page = await chromium.open('/blank.html');
  const out = await page.evaluate(async () => {
    const slim = await import('/pkg/slim.js');
    const attempt = (source) => slim.initialize(source).then(() => 'resolved', (error) => error.message);
    const refusals = [
      await attempt('/empty.wasm'),
      await attempt('/html-as-wasm'),
      await attempt('/no-such.wasm'),
      await attempt(fetch('/empty.wasm')),
    ];
    await slim.initialize('/pkg/wasm/toolmark_bridge.wasm');
    return { refusals, id: slim.newId() };
  });
  const shape = /is not the toolmark_bridge\.wasm of this version of the package/;
  assert.match(out.refusals[0], shape);
  assert.match(out.refusals[1], /WebAssembly/);
  assert.match(out.refusals[2], /fetching the module failed: HTTP 404/);
  assert.match(out.refusals[3], shape);
  assert.match(out.id, UUID_V4);
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
    await slim.initialize('/pkg/wasm/toolmark_bridge.wasm');
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
