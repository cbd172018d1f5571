// Vite's production build of the app named by TOOLMARK_APP (apps/<app>/index.html) into dist/<app>.
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

const app = process.env.TOOLMARK_APP;

export default defineConfig({
  root: resolve(import.meta.dirname, 'apps', app),
  logLevel: 'warn',
  build: { outDir: resolve(import.meta.dirname, 'dist', app), emptyOutDir: true },
  // What @toolmark/bridge-wasm needs of Vite, as its README documents it: at most one line.
  // toolmark:extra-begin
  // toolmark:extra-end
});
