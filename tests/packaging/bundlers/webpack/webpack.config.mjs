// webpack's production build of apps/<TOOLMARK_APP>/main.js into dist/<app>/main.js
// (its defaults otherwise: a classic script, publicPath 'auto').
import { resolve } from 'node:path';

const app = process.env.TOOLMARK_APP;

export default {
  mode: 'production',
  entry: `./apps/${app}/main.js`,
  output: { path: resolve(import.meta.dirname, 'dist', app), clean: true },
  // What @toolmark/bridge-wasm needs of webpack, as its README documents it: at most one line.
  // toolmark:extra-begin
  // toolmark:extra-end
};
