// The JavaScript snippets of the READMEs (the repository's README.md and
// pkg-template/README.md, the npm page) against the built package: each
// bundles with esbuild and type-checks with tsc (checkJs) without an
// undefined name or a missing export, and as TypeScript under `strict`
// without any error (what a TypeScript app pasting it gets); the npm page's
// first snippet runs in Node as written; the bundler matrix's README app
// (tests/packaging/bundlers/apps/readme) is the README's. A root README snippet under a later section may use
// the `tm` and `bridge` of "Install and use"; nothing else comes from outside.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = join(root, 'pkg');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Every ```js block of `file`, with the heading it sits under. */
function snippets(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const out = [];
  let heading = '';
  const pattern = /^(#{1,4} .*)$|^```js\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(pattern)) {
    if (match[1]) heading = match[1];
    else out.push({ file, heading, code: match[2] });
  }
  return out;
}

/** What a later root README snippet may take from "Install and use": `tm` and `bridge`. */
function withContext({ file, code }) {
  if (file !== 'README.md') return code;
  const declares = (name) =>
    new RegExp(`(?:import|const|let)\\s*\\{[^}]*\\b${name}\\b[^}]*\\}|(?:const|let)\\s+${name}\\b`).test(code);
  const uses = (name) => new RegExp(`\\b${name}\\b`).test(code);
  const prelude = [];
  if (uses('bridge') && !declares('bridge')) prelude.push("import { bridge } from '@toolmark/bridge-wasm/bridge';");
  if (uses('tm') && !declares('tm')) {
    prelude.push("import { createToolmark } from '@toolmark/bridge-wasm';", 'const tm = createToolmark();');
  }
  return [...prelude, code].join('\n');
}

// TypeScript's codes for a name or an export that does not exist.
const UNDEFINED = new Set(['2304', '2552', '2305', '2307', '2724', '2614', '2582', '2693']);

let dir;
const all = [...snippets('README.md'), ...snippets('pkg-template/README.md')];

before(() => {
  assert.ok(existsSync(join(pkg, 'index.js')), 'pkg/ is not built: npm run build');
  dir = mkdtempSync(join(tmpdir(), 'toolmark-readme-'));
  // The package as installed: bare imports resolve through its exports map.
  mkdirSync(join(dir, 'node_modules', '@toolmark'), { recursive: true });
  symlinkSync(pkg, join(dir, 'node_modules', '@toolmark', 'bridge-wasm'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** tsc --noEmit over `files` (checkJs, DOM lib); the diagnostics about names and exports that do not exist. */
function undefinedNames(files) {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        allowJs: true, checkJs: true, noEmit: true, strict: false, skipLibCheck: true,
        target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom', 'dom.iterable'], types: [],
      },
      files,
    }),
  );
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir }, (error, stdout, stderr) => {
      const lines = `${stdout}${stderr}`.split('\n').filter(Boolean);
      resolve(lines.filter((line) => UNDEFINED.has(line.match(/error TS(\d+)/)?.[1])));
    });
  });
}

test('the READMEs have the snippets this test checks', () => {
  const pkgSnippets = all.filter((s) => s.file === 'pkg-template/README.md');
  assert.ok(pkgSnippets.length >= 2, 'the npm page shows code');
  const first = pkgSnippets[0].code;
  for (const name of ['createToolmark', 'bridge', 'createInPageChannel']) assert.match(first, new RegExp(`\\b${name}\\b`));
  assert.ok(all.filter((s) => s.file === 'README.md').length >= 6);
});

test('every README snippet type-checks with no undefined name or missing export, and bundles', async () => {
  const files = all.map((snippet, i) => {
    const name = `snippet-${i}.js`;
    writeFileSync(join(dir, name), `${withContext(snippet)}\nexport {};\n`);
    return name;
  });
  const problems = await undefinedNames(files);
  const where = (line) => {
    const i = Number(line.match(/snippet-(\d+)\.js/)?.[1]);
    return `${all[i]?.file} ${all[i]?.heading}: ${line}`;
  };
  assert.deepEqual(problems.map(where), []);
  for (const [i, file] of files.entries()) {
    await build({ entryPoints: [join(dir, file)], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent', absWorkingDir: dir })
      .catch((error) => assert.fail(`${all[i].file} ${all[i].heading}: esbuild: ${error.message}`));
  }
});

/** tsc --noEmit over `files` as TypeScript under `strict` (DOM lib): every diagnostic. */
function strictErrors(files) {
  writeFileSync(
    join(dir, 'tsconfig.strict.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, skipLibCheck: false,
        target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom', 'dom.iterable'], types: [],
      },
      files,
    }),
  );
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', 'tsconfig.strict.json', '--pretty', 'false'], { cwd: dir }, (error, stdout, stderr) => {
      resolve(`${stdout}${stderr}`.split('\n').filter((line) => /error TS\d+/.test(line)));
    });
  });
}

test('every README snippet type-checks as TypeScript under strict', async () => {
  const files = all.map((snippet, i) => {
    const name = `strict-${i}.ts`;
    writeFileSync(join(dir, name), `${withContext(snippet)}\nexport {};\n`);
    return name;
  });
  const where = (line) => {
    const i = Number(line.match(/strict-(\d+)\.ts/)?.[1]);
    return `${all[i]?.file} ${all[i]?.heading}: ${line}`;
  };
  assert.deepEqual((await strictErrors(files)).map(where), []);
});

test('the strict check finds a type error (the test can go red)', async () => {
  writeFileSync(join(dir, 'strict-broken.ts'), "const form = document.querySelector('form#signup');\nform.requestSubmit();\nexport {};\n");
  const errors = await strictErrors(['strict-broken.ts']);
  assert.ok(errors.some((line) => /TS18047|TS2339/.test(line)), errors.join('\n'));
});

test("the bundler matrix's README app is the README's first snippet, its WebSocket URL taken from the page", () => {
  const [first] = all.filter((s) => s.file === 'README.md');
  const app = readFileSync(join(root, 'tests', 'packaging', 'bundlers', 'apps', 'readme', 'main.js'), 'utf8');
  const code = app.slice(app.indexOf('import '));
  const line = "const detach = tm.use(bridge({ transport: websocketTransport({ url: 'wss://example.com/toolmark' }) }));";
  assert.ok(first.code.includes(line), 'the README app connects to wss://example.com/toolmark');
  const fromPage = "const url = new URLSearchParams(location.search).get('ws') ?? 'wss://example.com/toolmark';\n"
    + 'const detach = tm.use(bridge({ transport: websocketTransport({ url }) }));';
  assert.equal(code, first.code.replace(line, fromPage));
});

test('the check finds an undefined name (the test can go red)', async () => {
  writeFileSync(join(dir, 'broken.js'), "import { createToolmark, nothing } from '@toolmark/bridge-wasm';\nfillForm(createToolmark());\nexport {};\n");
  const problems = await undefinedNames(['broken.js']);
  assert.ok(problems.some((line) => /TS2304.*fillForm/.test(line)), problems.join('\n'));
  assert.ok(problems.some((line) => /TS2305|TS2724/.test(line) && /nothing/.test(line)), problems.join('\n'));
});

test("the npm page's first snippet runs in Node as written", async () => {
  const [first] = all.filter((s) => s.file === 'pkg-template/README.md');
  writeFileSync(join(dir, 'npm-page.mjs'), first.code);
  const { stdout } = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['npm-page.mjs'], { cwd: dir, timeout: 30_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout }));
  });
  assert.equal(stdout.trim(), "{ status: 'ok', data: { added: 'A1' } }");
});
