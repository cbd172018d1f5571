// How the default entries load their WebAssembly (docs/api.md, "Package and
// entry points"): in Chromium each part is fetched from beside the JS that
// imports it, compiled while it streams when served as application/wasm,
// and only the parts of what the page imports are fetched; a part that
// cannot be fetched or compiled (in Node: read or compiled), or a host
// without WebAssembly, rejects the import with a module_unavailable naming
// its URL or path, the host's error as cause. In Node the `node` condition
// reads the parts synchronously, so require() works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();
const pkgDir = new URL('../../pkg/', import.meta.url);

/** A fresh page that records the .wasm files it requests and each compile path used. */
async function recordingPage() {
  const page = await chromium.open();
  const wasm = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.endsWith('.wasm')) wasm.push(pathname);
  });
  await page.evaluate(() => {
    window.compiled = [];
    for (const name of ['instantiateStreaming', 'instantiate']) {
      const real = WebAssembly[name].bind(WebAssembly);
      WebAssembly[name] = (...args) => {
        window.compiled.push(name);
        return real(...args);
      };
    }
  });
  return { page, wasm };
}

test('Chromium: the README app\'s imports fetch only toolmark.wasm, compiled while it streams', async () => {
  const { page, wasm } = await recordingPage();
  const out = await page.evaluate(async () => {
    const { createToolmark } = await import('/pkg/index.js');
    const { bridge } = await import('/pkg/bridge/index.js');
    const { websocketTransport } = await import('/pkg/bridge/websocket.js');
    const tm = createToolmark();
    tm.register({ name: 'noop', description: 'Does nothing.', run: () => null });
    return { tools: tm.manifest('inapp').map((tool) => tool.name), kinds: [typeof bridge, typeof websocketTransport], compiled: window.compiled };
  });
  assert.deepEqual(out.tools, ['noop']);
  assert.deepEqual(out.kinds, ['function', 'function']);
  // index.js also names formTools and the path helpers: their parts are
  // fetched too when the page imports index.js itself (a bundler leaves
  // them out of an app that does not use them: tests/node/bundlers.test.mjs).
  assert.deepEqual([...new Set(wasm)].sort(), ['/pkg/wasm/forms.wasm', '/pkg/wasm/paths.wasm', '/pkg/wasm/toolmark.wasm']);
  assert.deepEqual(out.compiled, ['instantiateStreaming', 'instantiateStreaming', 'instantiateStreaming']);
});

test('Chromium: each transport entry fetches its own part, and works with the toolmark part\'s bridge', async () => {
  const { page, wasm } = await recordingPage();
  const out = await page.evaluate(async () => {
    const { bridge } = await import('/pkg/bridge/index.js');
    const { createToolmark } = await import('/pkg/index.js');
    const { postMessageTransport } = await import('/pkg/bridge/post-message.js');
    const { echoTransport } = await import('/pkg/bridge/echo.js');
    const { ToolmarkError } = await import('/pkg/errors.js');
    const tm = createToolmark();
    const transport = postMessageTransport({ target: window, targetOrigin: location.origin, allowedOrigins: [location.origin] });
    const sent = [];
    const detach = tm.use(bridge({ transport: { send: (m) => { sent.push(m); return transport.send(m); }, onMessage: (cb) => transport.onMessage(cb) } }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    detach();
    let thrown;
    try {
      echoTransport({});
    } catch (error) {
      thrown = { name: error.name, isToolmarkError: error instanceof ToolmarkError };
    }
    return { firstSent: sent[0]?.type, thrown };
  });
  assert.equal(out.firstSent, 'manifest');
  assert.deepEqual(out.thrown, { name: 'ToolmarkError', isToolmarkError: true });
  assert.deepEqual([...new Set(wasm)].sort(), ['/pkg/wasm/echo.wasm', '/pkg/wasm/forms.wasm', '/pkg/wasm/paths.wasm', '/pkg/wasm/post-message.wasm', '/pkg/wasm/toolmark.wasm']);
});

test('Chromium: validateMessage fetches only its part, the constants none', async () => {
  const { page, wasm } = await recordingPage();
  const out = await page.evaluate(async () => {
    const { PROTOCOL_VERSION, validateMessage } = await import('/pkg/protocol/index.js');
    const verdict = validateMessage({ protocol: PROTOCOL_VERSION, type: 'cancel', clientId: 'p', id: 'c1' }, 'toPage');
    return { ok: verdict.ok };
  });
  assert.equal(out.ok, true);
  assert.deepEqual([...new Set(wasm)], ['/pkg/wasm/protocol.wasm']);
});

test('Chromium: the path helpers\' part fetches only its module', async () => {
  const { page, wasm } = await recordingPage();
  const out = await page.evaluate(async () => {
    // The part's bundle, which the root entry re-exports them from.
    const { getPath, setPath, flatten } = await import('/pkg/wasm/paths.js');
    const target = setPath({}, 'a.0.b', 1);
    return { got: getPath(target, 'a.0.b'), flat: flatten(target) };
  });
  assert.equal(out.got, 1);
  assert.deepEqual(out.flat, { 'a.0.b': 1 });
  assert.deepEqual([...new Set(wasm)], ['/pkg/wasm/paths.wasm']);
});

test('Chromium: a part served without application/wasm still loads (compiled from its bytes)', async () => {
  const { page } = await recordingPage();
  await page.route('**/pkg/wasm/toolmark.wasm', async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, headers: { ...response.headers(), 'content-type': 'application/octet-stream' } });
  });
  const out = await page.evaluate(async () => {
    const { bridge } = await import('/pkg/bridge/index.js');
    return { kind: typeof bridge, compiled: window.compiled };
  });
  assert.equal(out.kind, 'function');
  // wasm-bindgen's loader tries streaming first, then compiles the bytes.
  assert.deepEqual(out.compiled, ['instantiateStreaming', 'instantiate']);
});

test('Chromium: a part that cannot be fetched rejects the import, naming its URL and the inline entry', async () => {
  const { page } = await recordingPage();
  await page.route('**/pkg/wasm/toolmark.wasm', (route) => route.fulfill({ status: 404, body: 'not here' }));
  const message = await page.evaluate(() => import('/pkg/bridge/websocket.js').then(() => 'loaded', (error) => error.message));
  assert.match(message, /fetching its module http:\/\/[^ ]+\/pkg\/wasm\/toolmark\.wasm failed \(HTTP 404\)/);
  assert.match(message, /@toolmark\/bridge-wasm\/inline/);
});

test('Chromium: a part whose fetch fails at the network rejects the import with module_unavailable, naming its URL, the fetch\'s error as cause', async () => {
  const { page } = await recordingPage();
  await page.route('**/pkg/wasm/toolmark.wasm', (route) => route.abort('connectionrefused'));
  const out = await page.evaluate(async () => {
    const { ToolmarkError } = await import('/pkg/errors.js');
    return import('/pkg/bridge/websocket.js').then(() => 'loaded', (error) => ({
      toolmarkError: error instanceof ToolmarkError, code: error.code, message: error.message, cause: error.cause?.name,
    }));
  });
  assert.equal(out.toolmarkError, true);
  assert.equal(out.code, 'module_unavailable');
  assert.match(out.message, /loading its module http:\/\/[^ ]+\/pkg\/wasm\/toolmark\.wasm failed \(TypeError: Failed to fetch\)/);
  assert.match(out.message, /serve wasm\/toolmark\.wasm of the package at that URL/);
  assert.equal(out.cause, 'TypeError');
});

/** `error` as a child process or a test reports it: its class, code, message and cause's class. */
const described = (error) => ({ name: error.name, code: error.code, message: error.message, cause: error.cause?.code ?? error.cause?.name });

test('Node: a part whose .wasm is missing, or not a module, rejects the import with module_unavailable naming its path, the host\'s error as cause', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolmark-loading-'));
  try {
    cpSync(fileURLToPath(pkgDir), dir, { recursive: true });
    rmSync(join(dir, 'wasm', 'protocol.wasm'));
    writeFileSync(join(dir, 'wasm', 'paths.wasm'), 'not a module');
    const { ToolmarkError } = await import(pathToFileURL(join(dir, 'errors.js')).href);
    const attempt = (file) => import(pathToFileURL(join(dir, file)).href).then(() => 'loaded', (error) => ({ ...described(error), toolmarkError: error instanceof ToolmarkError }));
    const missing = await attempt('protocol/index.node.js');
    assert.equal(missing.toolmarkError, true);
    assert.equal(missing.code, 'module_unavailable');
    assert.ok(missing.message.includes(`loading its module ${join(dir, 'wasm', 'protocol.wasm')} failed (Error: ENOENT`), missing.message);
    assert.match(missing.message, /install the package again/);
    assert.equal(missing.cause, 'ENOENT');
    const damaged = await attempt('wasm/paths.node.js');
    assert.equal(damaged.toolmarkError, true);
    assert.equal(damaged.code, 'module_unavailable');
    assert.ok(damaged.message.includes(`loading its module ${join(dir, 'wasm', 'paths.wasm')} failed (CompileError: `), damaged.message);
    assert.equal(damaged.cause, 'CompileError');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a host without WebAssembly (node --jitless): every entry rejects with module_unavailable saying the host has none', () => {
  const script = `
    const pkg = ${JSON.stringify(pkgDir.href)};
    const { ToolmarkError } = await import(new URL('errors.js', pkg));
    const out = {};
    for (const entry of ['index.node.js', 'wasm/protocol.js', 'inline.js']) {
      out[entry] = await import(new URL(entry, pkg)).then(() => 'loaded', (error) => error);
    }
    const slim = await import(new URL('slim.js', pkg));
    out['slim.js initialize'] = await slim.initialize(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => 'resolved', (error) => error);
    const described = ${described.toString()};
    console.log(JSON.stringify(Object.fromEntries(Object.entries(out).map(([entry, error]) =>
      [entry, error instanceof Error ? { ...described(error), toolmarkError: error instanceof ToolmarkError } : error]))));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  assert.deepEqual(Object.keys(out), ['index.node.js', 'wasm/protocol.js', 'inline.js', 'slim.js initialize']);
  for (const [entry, error] of Object.entries(out)) {
    assert.equal(error.toolmarkError, true, `${entry}: ${JSON.stringify(error)}`);
    assert.equal(error.code, 'module_unavailable', entry);
    assert.match(error.message, /failed \(this host has no WebAssembly\): allow WebAssembly/, entry);
    assert.equal(error.cause, 'ReferenceError', entry);
  }
  assert.match(out['index.node.js'].message, /loading its module \/[^ ]+\/wasm\/\w+\.wasm failed/);
  assert.match(out['wasm/protocol.js'].message, /loading its module file:\/\/[^ ]+\/wasm\/protocol\.wasm failed/);
});

test('Node: the node condition reads the parts synchronously, so require() works', () => {
  const script = `const { createToolmark, formTools } = require(${JSON.stringify(new URL('index.node.js', pkgDir).pathname)});
    const { echoTransport } = require(${JSON.stringify(new URL('bridge/echo.node.js', pkgDir).pathname)});
    const tm = createToolmark();
    tm.register({ name: 'noop', description: 'Does nothing.', run: () => null });
    console.log(JSON.stringify([tm.manifest('inapp').length, typeof formTools, typeof echoTransport]));`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), [1, 'function', 'function']);
});

test('Chromium: webmcp fetches its own part and attaches to the toolmark part\'s registry once; the whole module (/inline) the same', async () => {
  const { page, wasm } = await recordingPage();
  const out = await page.evaluate(async () => {
    /** Registers through `webmcp` on a registry of `createToolmark`; what the stand-in context saw. */
    async function attach({ createToolmark, webmcp }) {
      const registered = [];
      const modelContext = { registerTool: (tool) => registered.push([tool.name, tool.annotations.readOnlyHint]) };
      const tm = createToolmark();
      tm.register({ name: 'echo', description: 'Echoes', hints: { readOnly: true }, run: (input) => input });
      const plugin = webmcp({ modelContext });
      const detach = tm.use(plugin);
      let again;
      try {
        tm.use(plugin);
      } catch (error) {
        again = `${error.name}: ${error.message}`;
      }
      tm.register({ name: 'later', description: 'After attach', run: () => 1 });
      detach();
      tm.register({ name: 'detached', description: 'After dispose', run: () => 2 });
      return { registered, again };
    }
    const parts = await attach({ ...(await import('/pkg/index.js')), ...(await import('/pkg/webmcp/index.js')) });
    const inline = await attach(await import('/pkg/inline.js'));
    return { parts, inline };
  });
  const expected = {
    registered: [['echo', true], ['later', false]],
    again: 'ToolmarkError: use: not a Toolmark plugin (expected bridge(...) or webmcp(...), each attached once)',
  };
  assert.deepEqual(out.parts, expected);
  assert.deepEqual(out.inline, expected);
  assert.deepEqual([...new Set(wasm)].sort(), ['/pkg/wasm/forms.wasm', '/pkg/wasm/paths.wasm', '/pkg/wasm/toolmark.wasm', '/pkg/wasm/webmcp.wasm']);
});
