// npm run test:wasm: the Rust tests inside WebAssembly in real headless
// Chromium (Debian's chromium and chromium-driver), through wasm-pack.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const chromedriver = process.env.CHROMEDRIVER || '/usr/bin/chromedriver';
execFileSync(
  'wasm-pack',
  ['test', '--headless', '--chrome', '--chromedriver', chromedriver, '--', '--test', 'wasm'],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      // Extra Chromium flags (the runner itself adds --headless and --no-sandbox).
      WASM_BINDGEN_TEST_WEBDRIVER_JSON: join(root, 'tests', 'webdriver.json'),
      WASM_BINDGEN_TEST_TIMEOUT: process.env.WASM_BINDGEN_TEST_TIMEOUT || '120',
    },
  },
);
