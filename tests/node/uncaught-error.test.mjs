// An error the package throws and nobody catches, as Node prints it: the
// source line Node shows first is the package's own readable code (its
// `*.node.js` files are not minified), so the message follows within the
// first lines instead of after a whole minified bundle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

function uncaught(source) {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8', cwd: pkg });
  assert.notEqual(run.status, 0);
  return run.stderr.split('\n');
}

test("websocketTransport without a WebSocket: the message within Node's first lines, no long line before it", () => {
  const lines = uncaught(`
    delete globalThis.WebSocket;
    const { websocketTransport } = await import('./bridge/websocket.node.js');
    websocketTransport({ url: 'ws://127.0.0.1:9/x' });`);
  const at = lines.findIndex((line) => line.includes('websocketTransport: no WebSocket implementation (pass options.WebSocket'));
  assert.ok(at !== -1 && at < 6, lines.slice(0, 8).join('\n'));
  for (const line of lines.slice(0, at)) assert.ok(line.length <= 200, `a line of ${line.length} characters before the message`);
});

test('register without run: the same', () => {
  const lines = uncaught(`
    const { createToolmark } = await import('./index.node.js');
    createToolmark().register({ name: 'x', description: 'x' });`);
  const at = lines.findIndex((line) => line.includes('register: run must be a function'));
  assert.ok(at !== -1 && at < 6, lines.slice(0, 8).join('\n'));
  for (const line of lines.slice(0, at)) assert.ok(line.length <= 200, `a line of ${line.length} characters before the message`);
});

// In a browser the files are minified: each ships with its source map
// (`<file>.js.map`, the readable file carried in it), so devtools and error
// trackers show a thrown error's line as readable code.
const { SourceMap } = await import('node:module');
const { readFileSync, readdirSync } = await import('node:fs');
const { join } = await import('node:path');
const { chromiumWithServer } = await import('./support/browser.mjs');
const chromium = chromiumWithServer();

function browserFiles(dir = pkg) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return browserFiles(path);
    return entry.name.endsWith('.js') && !entry.name.endsWith('.node.js') ? [path] : [];
  });
}

test('every minified browser file names its source map, and the map carries the readable file', () => {
  let mapped = 0;
  for (const file of browserFiles()) {
    const code = readFileSync(file, 'utf8');
    const name = file.slice(file.lastIndexOf('/') + 1);
    if (name === 'bytes.js' || name === 'constants.js') continue; // data, not minified
    assert.ok(code.endsWith(`//# sourceMappingURL=${name}.map\n`), `${file} names its map`);
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
    assert.equal(map.sources.length, 1, file);
    assert.ok(typeof map.sourcesContent[0] === 'string' && map.sourcesContent[0].length > 0, `${file}: the map carries the file it was minified from`);
    // A bundle's readable file has its lines (its minified form has one).
    if (code.length > 4096) assert.ok(map.sourcesContent[0].split('\n').length > 100, `${file}: readable`);
    mapped += 1;
  }
  assert.ok(mapped >= 10, `${mapped} files`);
});

test("an error thrown in the browser's minified bundle maps to its readable line", async () => {
  const page = await chromium.open();
  const stack = await page.evaluate(async () => {
    const { createInPageChannel } = await import('/pkg/bridge/in-page.js');
    const { agent } = createInPageChannel();
    const cyclic = {};
    cyclic.self = cyclic;
    try {
      await agent.call('x', cyclic);
    } catch (error) {
      return error.stack;
    }
    return 'no error';
  });
  await page.close();
  const frame = stack.split('\n').find((line) => /\/pkg\/wasm\/toolmark\.js:\d+:\d+/.test(line));
  assert.ok(frame, stack);
  const [, line, column] = frame.match(/toolmark\.js:(\d+):(\d+)/).map(Number);
  const map = new SourceMap(JSON.parse(readFileSync(join(pkg, 'wasm', 'toolmark.js.map'), 'utf8')));
  const origin = map.findEntry(line - 1, column - 1);
  assert.equal(origin.originalSource.endsWith('toolmark.readable.js'), true, JSON.stringify(origin));
  const readable = map.payload.sourcesContent[0].split('\n')[origin.originalLine];
  assert.match(readable, /notCopyable|ToolmarkError/, readable);
});
