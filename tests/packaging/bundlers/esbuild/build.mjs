// esbuild's production build of apps/<TOOLMARK_APP>/main.js into dist/<app>/main.js
// (bundled, ES module, minified: process.env.NODE_ENV is then "production").
import * as esbuild from 'esbuild';

const app = process.env.TOOLMARK_APP;
const options = {
  entryPoints: [`apps/${app}/main.js`],
  bundle: true,
  format: 'esm',
  minify: true,
  outdir: `dist/${app}`,
  logLevel: 'warning',
};
// What @toolmark/bridge-wasm needs of esbuild, as its README documents it: at most one line
// (an option set on `options`, or a step such as copying a file into dist/<app>).
// esbuild leaves `new URL('./x.wasm', import.meta.url)` alone: the package's modules are copied beside the bundle.
// toolmark:extra-begin
(await import('node:fs')).cpSync(new URL('.', import.meta.resolve('@toolmark/bridge-wasm/wasm/toolmark.wasm')), options.outdir, { recursive: true, filter: (file) => !file.endsWith('.js') });
// toolmark:extra-end
await esbuild.build(options);
