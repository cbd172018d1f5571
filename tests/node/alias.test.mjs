// docs/alias.md's recipes for running an app written against
// `@toolmark/core/*` on this package, followed as written in fresh projects
// (the packed tarball installed offline): the npm alias under
// moduleResolution nodenext (tsc, then the compiled app run by Node), and
// `paths` plus esbuild's alias under moduleResolution bundler (tsc --noEmit,
// then the bundle run). Also the doc's claim that the plain `paths` wildcard
// fails under nodenext.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkgDir = join(root, 'pkg');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const doc = readFileSync(join(root, 'docs', 'alias.md'), 'utf8');

function run(file, args, cwd) {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code ?? 1 : 0, out: `${stdout}${stderr}`.trim(), stdout }),
    );
  });
}

/** The code blocks of `lang` under the doc's heading that starts with `heading`. */
function blocks(heading, lang) {
  const start = doc.indexOf(`\n## ${heading}`);
  assert.ok(start >= 0, `docs/alias.md has no section "${heading}"`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

// An app written against @toolmark/core: entry points, a transport, types.
const APP = `declare const console: { log(...values: unknown[]): void };
import { createToolmark } from '@toolmark/core';
import { bridge } from '@toolmark/core/bridge';
import { createInPageChannel } from '@toolmark/core/bridge/in-page';
import { websocketTransport } from '@toolmark/core/bridge/websocket';
import { validateMessage, type ToolResult } from '@toolmark/core/protocol';

const tm = createToolmark();
tm.register({ name: 'ping', description: 'Answers pong', run: () => 'pong' });
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
const result: ToolResult = await agent.call('ping', {});
const checked = validateMessage({ protocol: 1, type: 'describe', clientId: 'c', id: 'i', tool: 'ping' }, 'toPage');
console.log(JSON.stringify({ result, valid: checked.ok, websocket: typeof websocketTransport }));
`;
const EXPECTED = { result: { status: 'ok', data: 'pong' }, valid: true, websocket: 'function' };

const STRICT = { strict: true, target: 'es2022', lib: ['es2022'], types: [], skipLibCheck: false };

let work;
let tarball;

before(async () => {
  assert.ok(existsSync(join(pkgDir, 'package.json')), 'pkg/ is not built: run `npm run build` first');
  work = mkdtempSync(join(tmpdir(), 'toolmark-alias-'));
  const packed = await run('npm', ['pack', pkgDir, '--pack-destination', work, '--json'], work);
  assert.equal(packed.code, 0, packed.out);
  tarball = join(work, JSON.parse(packed.stdout)[0].filename);
});

after(() => rmSync(work, { recursive: true, force: true }));

function project(name) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' })}\n`);
  writeFileSync(join(dir, 'main.ts'), APP);
  return dir;
}

async function npmInstall(dir, spec) {
  const { code, out } = await run('npm', ['install', spec, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  assert.equal(code, 0, out);
}

test('nodenext: the npm alias (npm install @toolmark/core@file:<tarball>), tsc, then Node runs the app', async () => {
  const commands = blocks('Any setup', 'sh').join('\n');
  assert.match(commands, /^npm install @toolmark\/core@npm:@toolmark\/bridge-wasm$/m);
  const fromFile = commands.match(/^npm install (@toolmark\/core@file:)\/path\/to\/(toolmark-bridge-wasm-[\d.]+\.tgz)$/m);
  assert.ok(fromFile, commands);
  assert.equal(fromFile[2], tarball.split('/').pop(), 'the tarball name the doc gives');
  const dir = project('nodenext');
  await npmInstall(dir, `${fromFile[1]}${tarball}`);
  assert.equal(JSON.parse(readFileSync(join(dir, 'node_modules', '@toolmark', 'core', 'package.json'), 'utf8')).name, '@toolmark/bridge-wasm');
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'dist' }, files: ['main.ts'] }));
  const compiled = await run(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], dir);
  assert.equal(compiled.code, 0, compiled.out);
  const ran = await run(process.execPath, ['dist/main.js'], dir);
  assert.equal(ran.code, 0, ran.out);
  assert.deepEqual(JSON.parse(ran.stdout), EXPECTED);
});

test('nodenext: the plain paths wildcard fails as the doc says (TS2307)', async () => {
  const dir = project('nodenext-wildcard');
  await npmInstall(dir, tarball);
  const paths = { '@toolmark/core': ['./node_modules/@toolmark/bridge-wasm'], '@toolmark/core/*': ['./node_modules/@toolmark/bridge-wasm/*'] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', paths }, files: ['main.ts'] }));
  const checked = await run(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], dir);
  assert.notEqual(checked.code, 0);
  assert.match(checked.out, /error TS2307: Cannot find module '@toolmark\/core\/bridge'/);
});

test("bundler: the doc's tsconfig paths type-check, esbuild's alias bundles, the bundle runs", async () => {
  const [tsconfigText] = blocks('A bundler app', 'json');
  const tsconfig = JSON.parse(tsconfigText);
  assert.equal(tsconfig.compilerOptions.moduleResolution, 'bundler');
  const dir = project('bundler');
  await npmInstall(dir, tarball);
  tsconfig.compilerOptions = { ...STRICT, noEmit: true, ...tsconfig.compilerOptions };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['main.ts'] }));
  const checked = await run(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], dir);
  assert.equal(checked.code, 0, checked.out);
  assert.equal(checked.out, '');

  const flag = doc.match(/esbuild src\/main\.ts --bundle --alias:(@toolmark\/core)=(@toolmark\/bridge-wasm)/);
  assert.ok(flag, 'the doc gives the esbuild alias');
  await build({
    entryPoints: [join(dir, 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: join(dir, 'dist', 'app.mjs'),
    alias: { [flag[1]]: flag[2] },
    tsconfigRaw: '{}', // the alias alone, not the tsconfig paths
    logLevel: 'silent',
    absWorkingDir: dir,
  });
  const copy = doc.match(/`cp (node_modules\/@toolmark\/bridge-wasm\/wasm)\/\*\.wasm dist\/`/);
  assert.ok(copy, 'the doc says to copy the modules beside the bundle');
  for (const file of readdirSync(join(dir, copy[1]))) {
    if (file.endsWith('.wasm')) copyFileSync(join(dir, copy[1], file), join(dir, 'dist', file));
  }
  const ran = await run(process.execPath, ['dist/app.mjs'], dir);
  assert.equal(ran.code, 0, ran.out);
  assert.deepEqual(JSON.parse(ran.stdout), EXPECTED);
});
