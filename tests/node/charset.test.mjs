// The package as one classic script on a page that declares no charset: the
// page and the script are served without one, so Chromium decodes the script
// as windows-1252 (the locale default), and any non-ASCII byte in it changes
// meaning. Bundled to an IIFE the way Rollup, webpack and Vite emit it, with
// UTF-8 kept as is (esbuild's `charset: 'utf8'`; esbuild's own default would
// escape it). The inlined module (the inline entry: an IIFE cannot await the
// default entries' modules) must still instantiate and the bridge work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { chromiumWithServer } from './support/browser.mjs';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

/** The page without a charset, and the package bundled for it as one classic script. */
async function pages() {
  const bundle = await build({
    stdin: {
      contents: `
        import { createToolmark, newId, bridge, createInPageChannel } from './inline.js';
        window.toolmark = { createToolmark, newId, bridge, createInPageChannel };
      `,
      resolveDir: pkg,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    charset: 'utf8',
    write: false,
  });
  return {
    '/legacy.html': {
      type: 'text/html',
      body: '<!doctype html><title>legacy</title><script src="/bundle.js"></script>',
    },
    '/bundle.js': { type: 'text/javascript', body: bundle.outputFiles[0].contents },
  };
}
const chromium = chromiumWithServer({ root: pkg, pages });

test('a classic-script bundle works on a page without a charset', async () => {
  const page = await chromium.open('/legacy.html');
  const out = await page.evaluate(async () => {
    if (!window.toolmark) return { loaded: false };
    const { createToolmark, newId, bridge, createInPageChannel } = window.toolmark;
    const tm = createToolmark();
    const { transport, agent } = createInPageChannel();
    tm.use(bridge({ transport }));
    tm.register({ name: 'greet', description: 'Greets.', run: ({ name }) => ({ text: `hi ${name}` }) });
    for (let i = 0; i < 100 && !agent.tools.some((tool) => tool.name === 'greet'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return {
      loaded: true,
      charset: document.characterSet,
      id: newId(),
      result: await agent.call('greet', { name: 'Zoë' }),
    };
  });
  assert.deepEqual(page.errors.map(String), []);
  assert.equal(out.loaded, true);
  assert.equal(out.charset, 'windows-1252');
  assert.match(out.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(out.result, { status: 'ok', data: { text: 'hi Zoë' } });
});
