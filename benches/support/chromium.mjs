// A headless Chromium page (tests/node/support/browser.mjs) serving the
// repository root, with ajv's draft 2020-12 validator bundled for the page at
// /bench/ajv.js (ajv is CommonJS; esbuild makes it one ES module).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchChromium, serve } from '../../tests/node/support/browser.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

export async function openBenchPage() {
  const bundled = await build({
    stdin: { contents: "export { default as Ajv2020 } from 'ajv/dist/2020.js';", resolveDir: root },
    bundle: true, format: 'esm', platform: 'browser', write: false, minify: true,
  });
  const server = await serve(root, {
    '/blank.html': '<!doctype html><title>bench</title>',
    '/bench/ajv.js': { type: 'text/javascript', body: bundled.outputFiles[0].text },
  });
  const browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(`${server.url}/blank.html`);
  const version = browser.context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent));
  return {
    page, version,
    /** Another fresh page on the same server. */
    async newPage() {
      const fresh = await browser.newPage();
      await fresh.goto(`${server.url}/blank.html`);
      return fresh;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
