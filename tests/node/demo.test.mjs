// The README's demo command keeps working: the scripted agent gets its
// results and the human's decision comes back as `confirmed`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const demo = fileURLToPath(new URL('../../examples/demo/main.mjs', import.meta.url));

test('the demo approves the sign-up', () => {
  const out = execFileSync(process.execPath, [demo], { encoding: 'utf8' });
  assert.match(out, /"status":"invalid","issues":\[\{"path":"email"/);
  assert.match(out, /"needs_confirmation".*"path":"password","after":"\[redacted\]"/);
  assert.match(out, /The agent heard: \{"status":"ok","data":\{"account":"acct_1"/);
  assert.doesNotMatch(out, /correct horse"\}\]/, 'the password never leaves the page in changes');
});

test('the demo can reject', () => {
  const out = execFileSync(process.execPath, [demo, '--reject'], { encoding: 'utf8' });
  assert.match(out, /The agent heard: \{"status":"cancelled","by":"operator"\}/);
});
