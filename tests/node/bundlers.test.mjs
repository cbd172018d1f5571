// The bundler matrix of issue 30 against the built pkg/: the README's app and
// an app of the protocol constants alone, each built for production by Vite,
// webpack, Rspack, Rollup, esbuild and Parcel and loaded through a plain
// import map, run in headless Chromium (the README app against a real `ws`
// WebSocket server in this process), with the size of everything each
// output ships recorded, and issue 30's size figures (SIZE_LIMITS in
// support/bundlers.mjs) asserted; without a bundler (the import map) they
// are asserted only with TOOLMARK_ASSERT_SIZES=1 (SIZE_SKIP says why).
//
// Needs the npm registry the first time: the bundlers are installed once per
// set of versions under target/bundlers-<key>/ (TOOLMARK_BUNDLERS_CACHE=0: a
// fresh install per run). TOOLMARK_BUNDLERS=vite,esbuild runs only those;
// TOOLMARK_BUNDLERS_PKG=<dir> tests another built package than pkg/;
// TOOLMARK_KEEP_BUNDLERS=1 keeps the temp folder.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { launchChromium } from './support/browser.mjs';
import {
  BUNDLERS, REPO_ROOT, SIZE_LIMITS, buildApp, exportedNames, extraLines, importedNames, kb, measure, openPage,
  prepareProject, serveOutput, shipped, startAgent,
} from './support/bundlers.mjs';

const pkgDir = resolve(process.env.TOOLMARK_BUNDLERS_PKG || join(REPO_ROOT, 'pkg'));
const bundlers = process.env.TOOLMARK_BUNDLERS ? process.env.TOOLMARK_BUNDLERS.split(',') : Object.keys(BUNDLERS);
const assertSizes = process.env.TOOLMARK_ASSERT_SIZES === '1';
// A page without a bundler loads every module the entries it imports name,
// and API.md makes these synchronous after import: the root entry's
// formTools and path helpers (so forms.wasm and paths.wasm load before the
// README app runs) and protocol's validateMessage (protocol.wasm, for the
// constants app).
const unbundled = (what) => (assertSizes ? false : `issue 30: not met without a bundler (${what}; TOOLMARK_ASSERT_SIZES=1 checks it)`);
const SIZE_SKIP = {
  importmap: {
    readme: unbundled("the root entry's synchronous formTools and path helpers load forms.wasm and paths.wasm"),
    constants: unbundled("protocol's synchronous validateMessage loads protocol.wasm"),
  },
};

describe('bundlers: the README app and the constants app in every bundler, in Chromium', { timeout: 600_000 }, () => {
  let project;
  let browser;
  const cleanups = [];
  const sizes = {}; // `${bundler} ${app}` → measure()

  before(async () => {
    for (const name of bundlers) assert.ok(BUNDLERS[name], `TOOLMARK_BUNDLERS names ${name}: not one of ${Object.keys(BUNDLERS)}`);
    project = await prepareProject({ pkgDir, bundlers });
    browser = await launchChromium();
  }, { timeout: 400_000 });

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await browser?.close();
    project?.close();
  });

  /** `close` once, by the test's `finally` or, if the test never got there, by the file's `after`. */
  function closing(close) {
    let done;
    const once = () => (done ??= close());
    cleanups.push(once);
    return once;
  }

  /** Serves a build and opens `path` in a fresh page. */
  async function open(build, path) {
    const server = await serveOutput(project, build.out);
    let page;
    const close = closing(async () => {
      await page?.close().catch(() => {});
      await server.close();
    });
    page = await openPage(browser, server, path);
    return { page, server, close };
  }

  function record(t, bundler, app, build, fetched) {
    for (const line of build.warnings) t.diagnostic(`${bundler} ${app}: ${line}`);
    const size = measure(shipped(build, fetched));
    size.fetched = measure([...fetched].filter((file) => !file.endsWith('.html')));
    sizes[`${bundler} ${app}`] = size;
    const files = size.files.map((f) => `${relative(project.work, f.file)} ${f.raw} B`).join(', ');
    t.diagnostic(`${bundler} ${app}: ${size.raw} B raw, ${size.gzip} B gzip -9, ${size.brotli} B brotli 11 (${kb(size.gzip)} KB gzip): ${files}`);
  }

  test('each bundler config holds at most one extra line for the package', () => {
    for (const name of Object.keys(BUNDLERS)) {
      const lines = extraLines(name);
      assert.ok(lines.length <= 1, `${name}: ${lines.length} extra lines in ${BUNDLERS[name].config}: ${lines.join(' | ')}`);
    }
  });

  test('the everything app imports every name of every entry of the package', async () => {
    const imported = importedNames('everything');
    for (const [subpath, names] of Object.entries(await exportedNames(project))) {
      assert.deepEqual(imported[subpath], names, `tests/packaging/bundlers/apps/everything/main.js: ${subpath}`);
    }
    for (const subpath of Object.keys(project.package.exports).filter((s) => s.endsWith('.json') && s.startsWith('./protocol/'))) {
      assert.deepEqual(imported[subpath], ['default'], `tests/packaging/bundlers/apps/everything/main.js: ${subpath}`);
    }
  });

  for (const bundler of bundlers) {
    const { label } = BUNDLERS[bundler] ?? { label: bundler };

    test(`${label}: the README app answers a call and asks for confirmation over a WebSocket`, { timeout: 180_000 }, async (t) => {
      const build = await buildApp(project, bundler, 'readme');
      const agent = await startAgent();
      const closeAgent = closing(() => agent.close());
      const { page, server, close } = await open(build, `/index.html?ws=${encodeURIComponent(agent.url)}`).catch(async (error) => {
        await closeAgent();
        throw error;
      });
      try {
        const { socket, message: manifest } = await agent.next('manifest').catch((error) => {
          throw new Error(`${error.message}; ${page.problems.join('; ')}`);
        });
        assert.deepEqual(manifest.tools.map((tool) => tool.name).sort(), ['signup.fill', 'signup.submit']);
        assert.equal(manifest.tools.find((tool) => tool.name === 'signup.submit').hints.consequential, true);
        const call = (id, tool, input) => agent.send(socket, { protocol: 1, type: 'call', clientId: manifest.clientId, id, tool, input });
        const result = async (id) => {
          for (let from = 0; ; ) {
            const found = await agent.next('result', { from });
            if (found.message.id === id) return found.message.result;
            from = found.index + 1;
          }
        };

        call('call-1', 'signup.fill', { email: 'ada@example.com' });
        assert.deepEqual(await result('call-1'), { status: 'ok', data: { filled: ['email'] } });
        assert.equal(await page.inputValue('form#signup input[name=email]'), 'ada@example.com');

        call('call-2', 'signup.submit', {});
        const needs = await result('call-2');
        assert.equal(needs.status, 'needs_confirmation', JSON.stringify(needs));
        // The README's confirmation list shows it.
        await page.waitForFunction(() => document.querySelectorAll('ul#pending li').length === 1, null, { timeout: 10_000 });

        assert.deepEqual(page.problems, []);
        record(t, bundler, 'readme', build, server.fetched);
      } finally {
        await close();
        await closeAgent();
      }
    });

    test(`${label}: the constants app runs and shows PROTOCOL_VERSION 1`, { timeout: 180_000 }, async (t) => {
      const build = await buildApp(project, bundler, 'constants');
      const { page, server, close } = await open(build, '/index.html');
      try {
        await page.waitForFunction(() => document.title === 'done', null, { timeout: 15_000 }).catch((error) => {
          throw new Error(`${error.message}; ${page.problems.join('; ')}`);
        });
        assert.equal(await page.textContent('#version'), '1');
        assert.equal(await page.textContent('#schemas'), 'urn:toolmark:protocol:v1:page-to-agent urn:toolmark:protocol:v1:agent-to-page');
        assert.deepEqual(page.problems, []);
        record(t, bundler, 'constants', build, server.fetched);
      } finally {
        await close();
      }
    });
  }

  describe("issue 30's sizes (gzip -9 of everything shipped)", () => {
    for (const bundler of bundlers) {
      const { label } = BUNDLERS[bundler] ?? { label: bundler };
      // What the page loads: a bundler may emit a file that the app never fetches (a lazy
      // chunk, an asset of a module it dropped), and that costs the user nothing.
      test(`${label}: the constants app loads no WebAssembly, at most ${kb(SIZE_LIMITS.constantsGzip)} KB gzip`, { skip: SIZE_SKIP[bundler]?.constants ?? false }, () => {
        const size = sizes[`${bundler} constants`];
        assert.ok(size, 'the constants app was not built and run');
        const list = (m) => m.files.map((f) => `${relative(project.work, f.file)} ${f.gzip} B gzip`).join(', ');
        const files = `fetched: ${list(size.fetched)}; emitted or fetched: ${list(size)}`;
        // The module as a file, or inlined (hex or base64 of its magic number `\0asm`).
        const wasm = size.fetched.files.filter((f) => f.file.endsWith('.wasm') || /0061736d|AGFzbQ/.test(readFileSync(f.file, 'latin1')));
        assert.deepEqual(wasm.map((f) => relative(project.work, f.file)), [], `WebAssembly loaded; ${files}`);
        assert.ok(size.fetched.gzip <= SIZE_LIMITS.constantsGzip, `${size.fetched.gzip} B gzip; ${files}`);
      });
      test(`${label}: the README app ships at most ${kb(SIZE_LIMITS.readmeGzip)} KB gzip`, { skip: SIZE_SKIP[bundler]?.readme ?? false }, () => {
        const size = sizes[`${bundler} readme`];
        assert.ok(size, 'the README app was not built and run');
        const files = size.files.map((f) => `${relative(project.work, f.file)} ${f.gzip} B gzip`).join(', ');
        assert.ok(size.gzip <= SIZE_LIMITS.readmeGzip, `${size.gzip} B gzip (${kb(size.gzip)} KB): ${files}`);
      });
    }
  });
});
