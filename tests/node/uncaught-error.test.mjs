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
