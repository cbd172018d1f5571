// `npm run demo`: builds the demo server (examples/server), serves the demo
// app (examples/demo/app) with the built package, and prints the URL to open.
//
//   node examples/demo/main.mjs [--port N] [--host ADDR]
//                                               # serve until Ctrl-C (on 127.0.0.1:8080 by default)
//   node examples/demo/main.mjs --headless      # drive the flow in headless Chromium, print the transcript
//       [--reject]                              #   the person rejects instead of approving
//       [--screenshot FILE]                     #   save the page while the confirmation waits
//
// --headless exits 0 when the flow went through: the person started a
// conversation and typed a name and a password, the agent filled the email,
// asked to submit, the person decided in the page and the agent
// acknowledged, with no error in the browser console.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleApp, buildServer, startServer, MODE_VARIABLES } from './server.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};
const headless = args.includes('--headless');
const reject = args.includes('--reject');
const screenshot = option('--screenshot');
const port = Number(option('--port') ?? (headless ? 0 : 8080));
const host = option('--host');

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (headless && !existsSync(executablePath)) {
  console.error(`demo: --headless needs Chromium at ${executablePath} (bash .ci/setup --browser installs Debian's; or set CHROMIUM)`);
  process.exit(1);
}

console.log('demo: building the demo server (cargo build -p toolmark-demo-server)');
const binary = buildServer();
const staticDir = assembleApp();

if (!headless) {
  // The server said why it stopped (a busy port names --port); no stack after it.
  const server = await startServer({ binary, staticDir, port, host }).catch((error) => {
    console.error(`demo: ${error.message}`);
    process.exit(1);
  });
  for (const line of server.lines) console.log(line);
  console.log(`\nOpen ${server.url} in a browser, click "Start a conversation", type a name and a password in the form,`);
  console.log('then say "sign me up as ada@example.com" in the chat and approve the submission in the page.');
  console.log('Ctrl-C stops the server.');
  const stop = () => server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const { code } = await server.exited;
  process.exit(code ?? 0);
}

// ---- --headless ---------------------------------------------------------
const env = { ...process.env };
for (const name of MODE_VARIABLES) delete env[name];
const server = await startServer({ binary, staticDir, env });
const { chromium } = await import('playwright-core');
const profile = mkdtempSync(join(tmpdir(), 'toolmark-demo-'));
let context;
let failed = false;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 540 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-quic'],
  });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error));
  // What the browser console shows as errors (a failed request, a 401…).
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  console.log(`demo: ${server.url} in headless Chromium`);

  await page.goto(server.url);
  await page.getByRole('button', { name: 'Start a conversation' }).click();
  // The person types what the agent is not told: a name and a password.
  await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
  // The person speaks once the server has the page's manifest, as they
  // would after reading which tools the agent can use.
  await page.locator('#page-tools', { hasText: 'signup.fill' }).waitFor({ timeout: 20000 });
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill('sign me up as ada@example.com');
  await page.getByRole('button', { name: 'Send' }).click();

  const pending = page.locator('#pending li').first();
  await pending.waitFor({ timeout: 20000 });
  if (screenshot) await page.screenshot({ path: screenshot });
  const summary = await pending.locator('strong').textContent();
  await pending.getByRole('button', { name: reject ? 'Reject' : 'Approve' }).click();

  // The acknowledgement: an agent entry after the confirmation entry.
  await page.waitForFunction(
    () => document.querySelector('#transcript li.confirmation ~ li.agent') !== null,
    undefined,
    { timeout: 20000 },
  );
  const { entries } = await page.evaluate(async () => {
    const { conversation } = await (await fetch('/api/session')).json();
    return (await fetch(`/api/transcript?conversation=${conversation}`)).json();
  });
  const account = await page.locator('#account').textContent();
  const connection = await page.locator('#connection').textContent();

  const show = (who, text) => console.log(`${who.padEnd(13)} ${text}`);
  const outcome = (o = {}) => [o.status, o.code].filter(Boolean).join(' ');
  console.log('\nTranscript:');
  for (const entry of entries) {
    if (entry.kind === 'user' || entry.kind === 'agent') show(entry.kind, entry.text);
    if (entry.kind === 'tool') show('tool', `${entry.name} ${JSON.stringify(entry.input)} → ${outcome(entry.outcome)}`);
    if (entry.kind === 'confirmation') {
      show('human', `${reject ? 'rejected' : 'approved'} “${summary}” in the page`);
      show('confirmation', `${entry.tool} → ${outcome(entry.outcome)}`);
    }
  }
  console.log(`\nThe page says: ${account || '(no account created)'}`);
  console.log(`The page shows: ${connection}`);

  const calls = entries.filter((e) => e.kind === 'tool' && e.name === 'page_call');
  const filled = calls.some((e) => e.input.tool === 'signup.fill' && e.outcome.status === 'ok');
  const asked = calls.some((e) => e.input.tool === 'signup.submit' && e.outcome.status === 'needs_confirmation');
  const confirmation = entries.find((e) => e.kind === 'confirmation');
  const decided = confirmation?.outcome.status === (reject ? 'cancelled' : 'ok');
  const acknowledged = entries.at(-1)?.kind === 'agent' && entries.at(-2) === confirmation;
  const checks = { connected: connection === 'Agent connection: connected', filled, 'confirmation asked': asked, [reject ? 'rejected' : 'approved']: decided, acknowledged };
  checks['no errors in the console'] = pageErrors.length === 0 && consoleErrors.length === 0;
  for (const error of pageErrors) console.error(`page error: ${error.message}`);
  for (const error of consoleErrors) console.error(`console error: ${error}`);
  console.log(Object.entries(checks).map(([what, ok]) => `${ok ? '✓' : '✗'} ${what}`).join('  '));
  failed = !Object.values(checks).every(Boolean);
} catch (error) {
  console.error(`demo: the flow failed: ${error.message}`);
  const chat = await context?.pages()[0]?.locator('#page-tools, #transcript li').allTextContents().catch(() => []);
  if (chat?.length) console.error(`demo: the page showed:\n  ${chat.join('\n  ')}`);
  failed = true;
} finally {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
  await server.close();
}
process.exit(failed ? 1 : 0);
