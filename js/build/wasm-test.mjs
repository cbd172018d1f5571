// npm run test:wasm: the Rust tests inside WebAssembly in real headless
// Chromium (Debian's chromium and chromium-driver), through wasm-pack:
// tests/wasm.rs, tests/wasm_loop.rs, and tests/wasm_transports.rs against the counterparts
// started here (tests/node/support/wasm-counterparts.mjs), stopped after.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCounterparts } from '../../tests/node/support/wasm-counterparts.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const chromedriver = process.env.CHROMEDRIVER || '/usr/bin/chromedriver';
// tests/webdriver.json: extra Chromium flags (the runner itself adds --headless
// and --no-sandbox); the counterparts add their proxy flags to a copy.
const counterparts = await startCounterparts({ baseWebdriverJson: join(root, 'tests', 'webdriver.json') });
let code;
try {
  // Async: the counterparts answer from this process while the tests run.
  code = await new Promise((resolve, reject) => {
    const child = spawn(
      'wasm-pack',
      ['test', '--headless', '--chrome', '--chromedriver', chromedriver, '--', '--features', 'transport-tests', '--test', 'wasm', '--test', 'wasm_loop', '--test', 'wasm_transports'],
      {
        cwd: root,
        stdio: ['inherit', 'inherit', 'pipe'],
        env: {
          ...process.env,
          WASM_BINDGEN_TEST_WEBDRIVER_JSON: counterparts.webdriverJson,
          WASM_BINDGEN_TEST_TIMEOUT: process.env.WASM_BINDGEN_TEST_TIMEOUT || '120',
          // Read at compile time by tests/wasm_transports.rs.
          TOOLMARK_TEST_CONTROL_URL: counterparts.controlUrl,
        },
      },
    );
    // wasm-pack asks crates.io for a newer version of itself once a day and
    // warns when it cannot reach it (or finds one): not about these tests.
    // Its other lines pass through as they are.
    let versionCheck = false;
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (/failed to get wasm-pack version|newer version of wasm-pack/.test(line)) versionCheck = true;
      else process.stderr.write(`${line}\n`);
    });
    child.once('error', reject);
    child.once('close', (status, signal) => {
      if (versionCheck) console.error("wasm-test: (a line of wasm-pack's daily check for a newer wasm-pack left out: not about these tests)");
      resolve(status ?? (signal ? 1 : 0));
    });
  });
} finally {
  await counterparts.close();
}
process.exitCode = code;
