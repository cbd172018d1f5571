// The 'wasm-unsafe-eval' hint recognizes a CSP refusal in each engine's
// words (js/src/wasm-csp.js), and nothing else. The messages are the engines'
// own: Chromium's as Debian's Chromium throws it (tests/node/packaging.test.mjs
// sees it in an extension), Firefox's from SpiderMonkey (JSMSG_CSP_BLOCKED_WASM,
// "call to {0}() blocked by CSP", {0} the API called).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedByCsp, loadFailed } from '../../js/src/wasm-csp.js';
import { ToolmarkError } from '../../js/src/errors.js';

const CHROMIUM = [
  `WebAssembly.Module(): Compiling or instantiating WebAssembly module violates the following Content Security policy directive because 'unsafe-eval' is not an allowed source of script in the following Content Security Policy directive: "script-src 'self' 'unsafe-inline'".`,
  `WebAssembly.compile(): Refused to compile or instantiate WebAssembly module because neither 'wasm-eval' nor 'unsafe-eval' is an allowed source of script in the following Content Security Policy directive: "script-src 'self'"`,
];
const FIREFOX = ['WebAssembly.Module', 'WebAssembly.compile', 'WebAssembly.instantiate', 'WebAssembly.compileStreaming']
  .map((api) => `call to ${api}() blocked by CSP`);

for (const [engine, messages] of [['Chromium', CHROMIUM], ['Firefox', FIREFOX]]) {
  test(`${engine}'s CSP refusal gets the 'wasm-unsafe-eval' hint`, () => {
    for (const message of messages) {
      const refusal = new WebAssembly.CompileError(message);
      assert.equal(blockedByCsp(refusal), true, message);
      const hinted = loadFailed(refusal, 'loading its module /x.wasm', 'serve it');
      assert.match(hinted.message, /'wasm-unsafe-eval' in script-src/);
      assert.match(hinted.message, /Content Security Policy blocks WebAssembly/);
      assert.equal(hinted.cause, refusal);
    }
  });
}

test("Chromium's refusal without a reason (a content script on a page without 'wasm-unsafe-eval') gets the content-script hint", () => {
  for (const api of ['Module', 'compile', 'instantiate', 'compileStreaming']) {
    // As Chromium throws it there (tests/node/extension-content-script.test.mjs sees it).
    const refusal = new WebAssembly.CompileError(`WebAssembly.${api}(): `);
    assert.equal(blockedByCsp(refusal), true);
    const hinted = loadFailed(refusal, 'loading its module /x.wasm', 'serve it');
    assert.match(hinted.message, /content script on a page whose Content Security Policy lacks 'wasm-unsafe-eval'/);
    assert.match(hinted.message, /extension page, an offscreen document or the background service worker/);
    assert.equal(hinted.cause, refusal);
  }
  // The same words from another error type are not a refusal.
  assert.equal(blockedByCsp(new TypeError('WebAssembly.Module(): ')), false);
});

test("on a web page the hint says that an extension cannot change the page's policy; in an extension, what to add to its manifest", () => {
  const refusal = new WebAssembly.CompileError(CHROMIUM[0]);
  const had = Object.getOwnPropertyDescriptor(globalThis, 'location');
  try {
    for (const protocol of ['https:', 'http:']) {
      globalThis.location = { protocol };
      const hinted = loadFailed(refusal, 'loading its module /x.wasm', 'serve it');
      assert.match(hinted.message, /Content Security Policy blocks WebAssembly\. Allow it with 'wasm-unsafe-eval' in script-src\./);
      assert.match(hinted.message, /the extension cannot change: run the bridge in an extension page, an offscreen document or the background service worker/);
      assert.doesNotMatch(hinted.message, /extension_pages/);
    }
    for (const protocol of ['chrome-extension:', 'moz-extension:']) {
      globalThis.location = { protocol };
      assert.match(loadFailed(refusal, 'loading its module /x.wasm', 'serve it').message, /"extension_pages": "script-src 'self' 'wasm-unsafe-eval'; object-src 'self';"/);
    }
  } finally {
    if (had) Object.defineProperty(globalThis, 'location', had);
    else delete globalThis.location;
  }
});

test('other errors are not taken for a CSP refusal', () => {
  for (const error of [
    new WebAssembly.CompileError('WebAssembly.Module(): expected magic word 00 61 73 6d, found 00 00 00 00 @+0'),
    new TypeError('call to WebAssembly.Module() failed'),
    new RangeError('WebAssembly.Memory(): could not allocate memory'),
    undefined,
    'blocked',
  ]) {
    assert.equal(blockedByCsp(error), false);
    const failed = loadFailed(error, 'loading its module /x.wasm', 'serve it');
    assert.equal(failed.message, `loading its module /x.wasm failed (${error}): serve it`);
    assert.equal(failed.cause, error);
  }
});

test('a loader\'s failure is module_unavailable saying what failed and what to do, the error as cause; a CSP refusal keeps its hint, a ToolmarkError passes through', () => {
  const compile = new WebAssembly.CompileError('WebAssembly.Module(): expected magic word 00 61 73 6d, found 00 00 00 00 @+0');
  const failed = loadFailed(compile, 'loading its module /x.wasm', 'serve it');
  assert.ok(failed instanceof ToolmarkError);
  assert.equal(failed.code, 'module_unavailable');
  assert.equal(failed.message, `loading its module /x.wasm failed (${compile}): serve it`);
  assert.equal(failed.cause, compile);
  const refusal = new WebAssembly.CompileError('call to WebAssembly.Module() blocked by CSP');
  const hinted = loadFailed(refusal, 'loading its module /x.wasm', 'serve it');
  assert.equal(hinted.code, 'module_unavailable');
  assert.match(hinted.message, /'wasm-unsafe-eval' in script-src/);
  assert.equal(hinted.cause, refusal);
  // A thrown value String() cannot write is named as an object, not thrown again.
  const bare = Object.create(null);
  const named = loadFailed(bare, 'loading its module /x.wasm', 'serve it');
  assert.equal(named.message, 'loading its module /x.wasm failed ([object]): serve it');
  assert.equal(named.cause, bare);
  const own = new ToolmarkError('invalid_argument', 'not this module');
  assert.equal(loadFailed(own, 'loading its module /x.wasm', 'serve it'), own);
});
