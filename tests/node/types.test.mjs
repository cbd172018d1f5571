// The TypeScript declarations of the built package: every `types` entry of the
// exports map exists, and the strict consumer in examples/consumer-ts type-checks
// (tsc --noEmit) under moduleResolution bundler, under NodeNext, and without the
// DOM lib; and every declaration file the package ships compiles on its own with
// lib es2022 and no DOM lib (a server or worker project). Any type error,
// including an unused @ts-expect-error, fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

function runTsc(project, cwd = example) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tsc, '-p', project, '--pretty', 'false'],
      { cwd, maxBuffer: 16 * 1024 * 1024 },
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
  assert.equal(entries, 11); // API.md's nine entry points, /slim and /inline
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

/** Every `.d.ts` under `dir`, relative to it. */
function declarations(dir, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return declarations(dir, path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

for (const resolution of ['nodenext', 'bundler']) {
  test(`every shipped declaration compiles with lib es2022 and no DOM lib (${resolution}, skipLibCheck false)`, async () => {
    assert.ok(existsSync(tsc), 'typescript is not installed (npm ci)');
    assert.ok(existsSync(join(pkg, 'index.d.ts')), 'pkg/ is not built: npm run build');
    const files = declarations(pkg);
    assert.ok(files.includes('webmcp/index.d.ts') && files.length >= 9, files.join(', '));
    const dir = mkdtempSync(join(tmpdir(), 'toolmark-no-dom-'));
    try {
      // The package as installed (a link to pkg/), every export imported by
      // its public name, and every shipped .d.ts listed so none is skipped.
      mkdirSync(join(dir, 'node_modules', '@toolmark'), { recursive: true });
      symlinkSync(pkg, join(dir, 'node_modules', '@toolmark', 'bridge-wasm'), 'dir');
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
      const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
      const subpaths = Object.entries(manifest.exports).filter(([, target]) => typeof target === 'object').map(([subpath]) => subpath);
      const lines = subpaths.map((subpath, i) => `import type * as entry${i} from '@toolmark/bridge-wasm${subpath.slice(1)}';`);
      lines.push(`export type Entries = [${subpaths.map((_, i) => `typeof entry${i}`).join(', ')}];`);
      writeFileSync(join(dir, 'main.ts'), `${lines.join('\n')}\n`);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            target: 'es2022',
            lib: ['es2022'],
            types: [],
            module: resolution === 'nodenext' ? 'nodenext' : 'esnext',
            moduleResolution: resolution,
          },
          files: ['main.ts', ...files.map((file) => `node_modules/@toolmark/bridge-wasm/${file}`)],
        }),
      );
      const { code, output } = await runTsc('tsconfig.json', dir);
      assert.equal(code, 0, `tsc without the DOM lib failed:\n${output}`);
      assert.equal(output, '');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
