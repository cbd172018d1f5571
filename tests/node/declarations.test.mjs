// The public declarations (js/src/**/*.d.ts, shipped in pkg/) against what
// wasm-bindgen generated for the core's classes (target/bindgen/*.d.ts, from
// the Rust source): the generated classes must be assignable to the public
// interfaces, so every method and property the public declaration promises
// exists, with a compatible shape. Drift on either side fails tsc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const generated = join(root, 'target', 'bindgen', 'toolmark_bridge.d.ts');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const dir = join(root, 'target', 'declarations-check');

function runTsc(project) {
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', project, '--pretty', 'false'], { cwd: dir }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code ?? 1 : 0, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

/** Writes the check program and its tsconfig; returns the project path. */
function project(name, source) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.ts`), source);
  const config = join(dir, `${name}.tsconfig.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2022', 'dom', 'esnext.disposable'],
        skipLibCheck: false,
        types: [],
      },
      files: [`${name}.ts`],
    }),
  );
  return config;
}

const program = (generatedPath, pkgIndex) => `
import type * as Generated from ${JSON.stringify(generatedPath)};
import type * as Public from ${JSON.stringify(pkgIndex)};
import type * as PublicWebSocket from ${JSON.stringify(pkgIndex.replace(/index\.js$/, 'bridge/websocket.js'))};
import type * as PublicEcho from ${JSON.stringify(pkgIndex.replace(/index\.js$/, 'bridge/echo.js'))};
import type * as PublicPostMessage from ${JSON.stringify(pkgIndex.replace(/index\.js$/, 'bridge/post-message.js'))};

declare const tm: Generated.Toolmark;
declare const scope: Generated.Scope;

// Every member of the public interfaces exists on the generated classes.
export const registry: Public.Toolmark = tm;
export const toolScope: Public.ToolScope = scope;
export const events: Public.Toolmark['events'] = tm.events;
export const create: typeof Public.createToolmark = null as unknown as typeof Generated.createToolmark;
export const newId: typeof Public.newId = null as unknown as typeof Generated.newId;
export const llmName: typeof Public.llmName = null as unknown as typeof Generated.llmName;

// And nothing the Rust classes export is missing from the public ones
// (beyond wasm-bindgen's own free() and Symbol.dispose).
type Own<T> = Exclude<keyof T, 'free' | typeof Symbol.dispose>;
type Missing<G, P> = Exclude<Own<G>, keyof P>;
export const toolmarkExtra: [Missing<Generated.Toolmark, Public.Toolmark>] extends [never] ? true : Missing<Generated.Toolmark, Public.Toolmark> = true;
export const scopeExtra: [Missing<Generated.Scope, Public.ToolScope>] extends [never] ? true : Missing<Generated.Scope, Public.ToolScope> = true;

declare const ws: Generated.WebSocketTransport;
export const websocket: PublicWebSocket.WebSocketTransport = ws;
export const websocketExtra: [Missing<Generated.WebSocketTransport, PublicWebSocket.WebSocketTransport>] extends [never] ? true : Missing<Generated.WebSocketTransport, PublicWebSocket.WebSocketTransport> = true;

type PublicEchoTransport = ReturnType<typeof PublicEcho.echoTransport>;
declare const et: Generated.EchoTransport;
export const echo: PublicEchoTransport = et;
export const echoExtra: [Missing<Generated.EchoTransport, PublicEchoTransport>] extends [never] ? true : Missing<Generated.EchoTransport, PublicEchoTransport> = true;
export const echoFactory: typeof PublicEcho.echoTransport = null as unknown as typeof Generated.echoTransport;
type PostMessageReturn = ReturnType<typeof PublicPostMessage.postMessageTransport>;
declare const pm: Generated.PostMessageTransport;
export const postMessage: PostMessageReturn = pm;
export const postMessageExtra: [Missing<Generated.PostMessageTransport, PostMessageReturn>] extends [never] ? true : Missing<Generated.PostMessageTransport, PostMessageReturn> = true;

`;

test('the public declarations match the classes wasm-bindgen generated', async () => {
  assert.ok(existsSync(generated), 'target/bindgen is not built: npm run build');
  assert.ok(existsSync(join(root, 'pkg', 'index.d.ts')), 'pkg/ is not built: npm run build');
  const text = readFileSync(generated, 'utf8');
  for (const name of ['Toolmark', 'Scope', 'Events', 'Bridge', 'WebSocketTransport', 'EchoTransport']) assert.match(text, new RegExp(`export class ${name} `));
  for (const name of ['Toolmark', 'Scope', 'Events', 'Bridge', 'WebSocketTransport']) assert.match(text, new RegExp(`export class ${name} `));
  assert.match(text, /export class PostMessageTransport /);
  const config = project('check', program('../bindgen/toolmark_bridge.js', '../../pkg/index.js'));
  const { code, output } = await runTsc(config);
  assert.equal(code, 0, `tsc failed:\n${output}`);
  rmSync(join(dir, 'check.ts'));
});

test('the check can go red: a member the public declaration promises but Rust lacks fails it', async () => {
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(generated, 'utf8');
  // The generated declaration without `undo`, as if Rust had lost the method.
  const without = text.replace(/^\s*undo\(.*\n/m, '');
  assert.notEqual(without, text, 'no undo( in the generated declaration');
  writeFileSync(join(dir, 'lost-undo.d.ts'), without);
  writeFileSync(join(dir, 'lost-undo.js'), '');
  const config = project('negative', program('./lost-undo.js', '../../pkg/index.js'));
  const { code, output } = await runTsc(config);
  assert.notEqual(code, 0, 'tsc accepted a class without undo()');
  assert.match(output, /undo/);
});
