// Rollup's production build of apps/<TOOLMARK_APP>/main.js into dist/<app> as ES modules,
// with the plugins any browser app of npm packages has: resolve (browser conditions),
// CommonJS (React, the peer's dependencies), JSON, NODE_ENV and minification.
import commonjs from '@rollup/plugin-commonjs';
import json from '@rollup/plugin-json';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import replace from '@rollup/plugin-replace';
import terser from '@rollup/plugin-terser';

const app = process.env.TOOLMARK_APP;

export default {
  input: `apps/${app}/main.js`,
  output: { dir: `dist/${app}`, format: 'es' },
  plugins: [
    nodeResolve({ browser: true }),
    commonjs(),
    json(),
    replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': JSON.stringify('production') } }),
    terser(),
    // What @toolmark/bridge-wasm needs of Rollup, as its README documents it: at most one line.
    // Rollup leaves `new URL('./x.wasm', import.meta.url)` alone: this plugin emits the file.
    // toolmark:extra-begin
    (await import('@web/rollup-plugin-import-meta-assets')).importMetaAssets(),
    // toolmark:extra-end
  ],
};
