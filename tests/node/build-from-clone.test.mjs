// `npm run build` in a fresh clone (the committed tree, nothing installed in
// it): it sets up what it needs and builds pkg/; on a machine without Rust
// it stops with one line saying what to install.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function freshClone() {
  const dir = mkdtempSync(join(tmpdir(), 'toolmark-clone-'));
  execFileSync('git', ['clone', '--quiet', root, join(dir, 'repo')]);
  return dir;
}

test('npm run build in a fresh clone sets up and builds pkg/', { timeout: 900_000 }, () => {
  const dir = freshClone();
  try {
    const repo = join(dir, 'repo');
    assert.equal(existsSync(join(repo, 'node_modules')), false);
    const run = spawnSync('npm', ['run', 'build'], { cwd: repo, encoding: 'utf8', timeout: 900_000, maxBuffer: 64 << 20 });
    assert.equal(run.status, 0, `${run.stdout.slice(-2000)}\n${run.stderr.slice(-4000)}`);
    assert.match(run.stdout, /^setup: ready$/m);
    assert.match(run.stderr, /^built pkg\/ \(toolmark\.wasm \d+/m);
    const manifest = JSON.parse(readFileSync(join(repo, 'pkg', 'package.json'), 'utf8'));
    assert.equal(manifest.name, '@toolmark/bridge-wasm');
    for (const part of ['toolmark', 'echo', 'post-message', 'forms', 'protocol', 'paths', 'webmcp']) {
      assert.ok(existsSync(join(repo, 'pkg', 'wasm', `${part}.wasm`)), `pkg/wasm/${part}.wasm`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without Rust, npm run build stops with one line saying what to install', () => {
  const dir = freshClone();
  try {
    // A home without ~/.cargo and a PATH without Rust (node and npm stay).
    const home = join(dir, 'home');
    const path = [...new Set([join(process.execPath, '..'), '/usr/bin', '/bin'])].join(':');
    const run = spawnSync('npm', ['run', 'build'], {
      cwd: join(dir, 'repo'),
      encoding: 'utf8',
      env: { HOME: home, PATH: path, npm_config_cache: join(dir, 'npm-cache') },
    });
    assert.notEqual(run.status, 0);
    const said = run.stdout.split('\n').filter((line) => line.startsWith('setup:'));
    assert.deepEqual(said, ['setup: Rust is missing: install it from https://rustup.rs']);
    assert.doesNotMatch(`${run.stdout}\n${run.stderr}`, /ERR_MODULE_NOT_FOUND|^\s+at /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('npm test in a fresh clone installs nothing: it names what is missing and stops', () => {
  const dir = freshClone();
  try {
    const repo = join(dir, 'repo');
    const run = spawnSync('npm', ['test'], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
    assert.notEqual(run.status, 0);
    const said = run.stdout.split('\n').filter((line) => line.startsWith('setup:'));
    assert.ok(said.includes('setup: missing: the npm packages (npm ci)'), said.join('\n'));
    assert.equal(said.at(-1), 'setup: run `npm run setup:tests` first: it installs them');
    assert.ok(said.every((line) => !line.startsWith('setup: installing')), said.join('\n'));
    assert.equal(existsSync(join(repo, 'node_modules')), false, 'no npm package installed');
    assert.doesNotMatch(run.stdout, /cargo fmt|built pkg/, 'nothing after the check ran');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
