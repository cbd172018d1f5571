// `npm run demo -- --headless` end to end: the demo server (built with cargo
// if needed), the demo app in headless Chromium and the scripted agent; the
// transcript it prints shows the whole flow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MODE_VARIABLES } from '../../examples/demo/server.mjs';

const demo = fileURLToPath(new URL('../../examples/demo/main.mjs', import.meta.url));
const env = { ...process.env };
for (const name of MODE_VARIABLES) delete env[name];

function runDemo(...args) {
  const run = spawnSync(process.execPath, [demo, '--headless', ...args], { encoding: 'utf8', env, timeout: 300000 });
  return { ...run, out: run.stdout };
}

test('the headless demo: filled, confirmation asked, approved, acknowledged', () => {
  const { status, out, stderr } = runDemo();
  assert.equal(status, 0, `${out}\n${stderr}`);
  const transcript = out.slice(out.indexOf('Transcript:'));
  const lines = transcript.split('\n').slice(1, transcript.split('\n').indexOf(''));
  assert.deepEqual(
    lines.map((line) => line.split(/\s+/)[0]),
    ['user', 'tool', 'tool', 'tool', 'agent', 'human', 'confirmation', 'agent'],
    transcript,
  );
  assert.match(lines[0], /^user +sign me up as ada@example\.com$/);
  assert.match(lines[2], /page_call \{"tool":"signup\.fill","input":\{"email":"ada@example\.com"\}\} → ok$/);
  assert.match(lines[3], /page_call \{"tool":"signup\.submit","input":\{\}\} → needs_confirmation$/);
  assert.match(lines[4], /A confirmation is waiting in the page/);
  assert.match(lines[5], /^human +approved “Submit the sign-up form” in the page$/);
  assert.match(lines[6], /^confirmation +signup\.submit → ok$/);
  assert.match(lines[7], /^agent +Done: you approved it and the form was submitted\.$/);
  assert.match(out, /The page says: Account created for ada@example\.com on the free plan\./);
  assert.match(out, /✓ no errors in the console/);
  assert.doesNotMatch(`${out}\n${stderr}`, /console error|page error|\b401\b/);
});

test('the headless demo can reject', () => {
  const { status, out, stderr } = runDemo('--reject');
  assert.equal(status, 0, `${out}\n${stderr}`);
  assert.match(out, /^confirmation +signup\.submit → cancelled$/m);
  assert.match(out, /^agent +Understood: you rejected it, so nothing was submitted\.$/m);
  assert.match(out, /The page says: \(no account created\)/);
  assert.match(out, /✓ no errors in the console/);
});

test('a busy port: one line naming --port, and no stack', async () => {
  const busy = createServer();
  await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = busy.address();
    const run = spawnSync(process.execPath, [demo, '--port', String(port)], { encoding: 'utf8', env, timeout: 300000 });
    assert.equal(run.status, 1, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use; pass --port N`));
    assert.doesNotMatch(run.stderr, /^\s+at /m);
  } finally {
    busy.close();
  }
});

test('--host 0.0.0.0 listens on every interface and prints a URL a browser can open', async () => {
  const child = spawn(process.execPath, [demo, '--host', '0.0.0.0', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const lines = [];
    const url = await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        lines.push(line);
        const found = line.match(/^Open (http:\/\/\S+) in a browser/)?.[1];
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`the demo exited (${code}): ${lines.join('\n')}`)));
    });
    const port = new URL(url).port;
    assert.equal(new URL(url).hostname, '127.0.0.1');
    assert.ok(lines.includes(`Listening on 0.0.0.0:${port}: every interface of this machine`), lines.join('\n'));
    const page = await fetch(url);
    assert.equal(page.status, 200);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve()));
  }
});
