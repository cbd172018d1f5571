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
// esbuild leaves `new URL('./x.wasm', import.meta.url)` alone; a module loaded that way needs:
// (await import('node:fs')).cpSync(new URL(import.meta.resolve('@toolmark/bridge-wasm/toolmark_bridge.wasm')), `${options.outdir}/toolmark_bridge.wasm`);
// toolmark:extra-begin
// toolmark:extra-end
await esbuild.build(options);
