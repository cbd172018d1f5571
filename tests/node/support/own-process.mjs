// A test body run in a Node process of its own, where a throw reaches the
// host as uncaught (and would end the test runner's process).
import { execFile } from 'node:child_process';

const entry = (path) => JSON.stringify(new URL(`../../../pkg/${path}`, import.meta.url).href);

/**
 * Runs `body` (an ES module's text, with `createToolmark`, `bridge`,
 * `createInPageChannel` and `uncaught`, the messages of uncaught
 * exceptions, in scope) in a process of its own; resolves with what it
 * printed last, parsed as JSON.
 */
export function inOwnProcess(body) {
  const script = `
    const { createToolmark } = await import(${entry('index.js')});
    const { bridge } = await import(${entry('bridge/index.js')});
    const { createInPageChannel } = await import(${entry('bridge/in-page.js')});
    const uncaught = [];
    process.on('uncaughtException', (error) => uncaught.push(error.message));
    ${body}
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 }, (error, stdout, stderr) =>
      (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)))));
  });
}
