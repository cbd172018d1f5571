// The TypeScript declarations of the built package: every `types` entry of the
// exports map exists, and the strict consumer in examples/consumer-ts type-checks
// (tsc --noEmit) under moduleResolution bundler, under NodeNext, and without the
// DOM lib. Any type error, including an unused @ts-expect-error, fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');
const example = join(root, 'examples', 'consumer-ts');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** examples/consumer-ts/node_modules/@toolmark/bridge-wasm → pkg/, so imports go through the real exports map. */
function linkPackage() {
  const scope = join(example, 'node_modules', '@toolmark');
  const link = join(scope, 'bridge-wasm');
  const target = relative(scope, pkg);
  mkdirSync(scope, { recursive: true });
  let current;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : null;
  } catch {
    current = undefined;
  }
  if (current === target) return;
  if (current !== undefined) rmSync(link, { recursive: true, force: true });
  symlinkSync(target, link, 'dir');
}

function runTsc(project) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tsc, '-p', project, '--pretty', 'false'],
      { cwd: example, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? error.code ?? 1 : 0, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

test('every types entry of the exports map ships a declaration file', () => {
  assert.ok(existsSync(join(pkg, 'index.js')), 'pkg/ is not built: npm run build');
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const missing = [];
  let entries = 0;
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') {
      // Data, not modules: the schemas and the slim entry's bare .wasm.
      if (!/\.(json|wasm)$/.test(target)) assert.fail(`export ${subpath} has no types condition`);
      continue;
    }
    entries++;
    assert.equal(Object.keys(target)[0], 'types', `export ${subpath}: "types" must come first`);
    const dts = target.types;
    const js = target.default;
    assert.equal(dts, js.replace(/\.js$/, '.d.ts'), `export ${subpath}: types next to the .js`);
    if (!existsSync(join(pkg, dts))) missing.push(`${subpath} → ${dts}`);
  }
  assert.equal(entries, 10);
  assert.deepEqual(missing, [], 'declaration files missing from pkg/');
  assert.ok(existsSync(join(pkg, manifest.types)));
});

for (const [name, project] of [
  ['bundler resolution, DOM lib', 'tsconfig.json'],
  ['NodeNext resolution, DOM lib', 'tsconfig.nodenext.json'],
  ['NodeNext resolution, no DOM lib, no @types/node', 'no-dom/tsconfig.json'],
]) {
  test(`examples/consumer-ts type-checks strictly (${name})`, async () => {
    assert.ok(existsSync(tsc), 'typescript is not installed (npm ci)');
    assert.ok(existsSync(join(pkg, 'index.d.ts')), 'pkg/ is not built: npm run build');
    linkPackage();
    const { code, output } = await runTsc(project);
    assert.equal(code, 0, `tsc -p ${project} failed:\n${output}`);
    assert.equal(output, '', `tsc -p ${project} printed:\n${output}`);
  });
}

test('the type check really fails on a type error (the test can go red)', async () => {
  linkPackage();
  const { code, output } = await runTsc('negative/tsconfig.json');
  assert.notEqual(code, 0, 'tsc accepted a program with type errors');
  assert.match(output, /error TS2322/);
  assert.match(output, /error TS2578/, 'an unused @ts-expect-error must be reported');
});
