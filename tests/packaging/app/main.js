// The app of the packaging test (tests/node/packaging.test.mjs), written the way a user
// would, against the documented API (API.md) only. The same file runs under plain Node (from
// the installed tarball), bundled by Vite / webpack / esbuild in Chromium, and inside
// a Manifest V3 extension page. No init call: the API is synchronous after import.
import { createToolmark, newId, llmName } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { createInPageChannel } from '@toolmark/bridge-wasm/bridge/in-page';
import { validateMessage, protocolSchemas } from '@toolmark/bridge-wasm/protocol';
import pageToAgent from '@toolmark/bridge-wasm/protocol/v1/page-to-agent.json' with { type: 'json' };

const inBrowser = typeof window !== 'undefined' && typeof document !== 'undefined';

async function until(check, what, ms = 5000) {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function main() {
  const id = newId();
  const errors = [];
  const tm = createToolmark({ dev: true, onError: (e) => errors.push(e) });

  tm.register({
    name: 'demo.greet',
    description: 'Greets someone by name.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 } },
      required: ['name'],
      additionalProperties: false,
    },
    hints: { readOnly: true },
    run: ({ name }) => ({ greeting: `Hello, ${name}!` }),
  });

  let deleted = 0;
  tm.register({
    name: 'demo.delete',
    description: 'Deletes an item.',
    inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
    hints: { consequential: true },
    summary: ({ item }) => `Delete ${item}?`,
    run: ({ item }) => {
      deleted++;
      return { deleted: item };
    },
  });

  const { transport, agent } = createInPageChannel();
  const received = [];
  agent.onMessage((message) => received.push(message));
  const confirmedMessages = [];
  agent.onConfirmed((message) => confirmedMessages.push(message));

  const detach = tm.use(bridge({ transport }));
  await until(() => agent.clientId !== undefined && agent.tools.length === 2, 'the manifest');

  const ok = await agent.call('demo.greet', { name: 'Ann' });
  const invalid = await agent.call('demo.greet', { name: 42 });
  const needs = await agent.call('demo.delete', { item: 'x' });
  const pendingBefore = tm.pendingConfirmations().length;
  const deletedBefore = deleted;
  const final = await tm.confirmPending(needs.confirmId, true);
  await until(() => confirmedMessages.length === 1, 'the confirmed message');
  detach();

  const checked = received.map((message) => validateMessage(message, 'toAgent'));
  return {
    env: inBrowser ? 'browser' : 'node',
    id,
    llmName: llmName('demo.greet'),
    tools: agent.tools.map((tool) => tool.name).sort(),
    ok,
    invalid,
    needs,
    pendingBefore,
    deletedBefore,
    deletedAfter: deleted,
    pendingAfter: tm.pendingConfirmations().length,
    final,
    confirmed: confirmedMessages[0],
    received: received.map((message) => message.type),
    allValid: checked.every((check) => check.ok),
    invalidMessages: checked.filter((check) => !check.ok),
    badIsRejected: validateMessage({ protocol: 1, type: 'bogus' }, 'toAgent').ok === false,
    schemaId: pageToAgent.$id,
    schemaSame: JSON.stringify(pageToAgent) === JSON.stringify(protocolSchemas.pageToAgent),
    errors,
  };
}

function report(summary) {
  if (inBrowser) {
    window.result = summary;
    document.title = 'done';
  } else {
    console.log(JSON.stringify(summary));
  }
}

main().then(report, (error) => report({ failed: String((error && error.stack) || error) }));
