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
        before, valueBefore: valueBefore === undefined, same: first === again,
        id: slim.newId(), version: slim.PROTOCOL_VERSION,
        schemas: JSON.stringify(slim.protocolSchemas) === JSON.stringify(inline.protocolSchemas),
        valid: slim.validateMessage({ protocol: 1, type: 'cancel', clientId: 'c', id: 'x' }, 'toPage').ok,
        toolmarkError,
      }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
    assert.match(out.before, /^@toolmark\/bridge-wasm\/slim: createToolmark used before initialize\(\) resolved/);
    assert.equal(out.valueBefore, true);
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

const chromium = chromiumWithServer();

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
