// Every export of every entry of the package's API (the README's import
// table), each called once, so that the bundle carries all of it. The
// alternate-form entry (`./slim`, the same names loaded another way) is left
// out: an app uses one form. React comes with the React hook.
import {
  createToolmark, ToolmarkError, newId, llmName, getPath, setPath, flatten, formTools,
} from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { echoTransport } from '@toolmark/bridge-wasm/bridge/echo';
import { websocketTransport } from '@toolmark/bridge-wasm/bridge/websocket';
import { postMessageTransport } from '@toolmark/bridge-wasm/bridge/post-message';
import { createInPageChannel } from '@toolmark/bridge-wasm/bridge/in-page';
import { PROTOCOL_VERSION, validateMessage, protocolSchemas } from '@toolmark/bridge-wasm/protocol';
import pageToAgent from '@toolmark/bridge-wasm/protocol/v1/page-to-agent.json' with { type: 'json' };
import agentToPage from '@toolmark/bridge-wasm/protocol/v1/agent-to-page.json' with { type: 'json' };
import { webmcp } from '@toolmark/bridge-wasm/webmcp';
import { usePendingConfirmations } from '@toolmark/bridge-wasm/react';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

const until = async (check) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  return check();
};

async function main() {
  const result = { version: PROTOCOL_VERSION };
  const tm = createToolmark({ dev: true, onError: (e) => console.warn(e.code, e.message) });

  // The root entry.
  result.id = newId().length;
  result.llmName = llmName('cart.add');
  result.path = getPath(setPath({}, 'a.b', 2), 'a.b');
  result.flat = flatten({ a: { b: 1 } });
  try {
    tm.register({ name: 'bad', description: 'Lookbehind', inputSchema: { type: 'string', pattern: '(?<=a)b' }, run: () => null });
  } catch (error) {
    result.error = error instanceof ToolmarkError ? error.code : String(error);
  }
  formTools(document.querySelector('form#signup'), { scope: tm.scope('signup') });
  tm.scope('cart').register({
    name: 'add',
    description: 'Add an item to the cart',
    inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    run: ({ sku }) => ({ added: sku }),
  });

  // The protocol entry and its JSON subpaths.
  result.schemas = pageToAgent.$id === protocolSchemas.pageToAgent.$id && agentToPage.$id === protocolSchemas.agentToPage.$id;

  // The in-page channel, one call, the manifest checked by validateMessage.
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  result.call = await agent.call('cart.add', { sku: 'A1' }, { timeoutMs: 5000 });
  result.tools = agent.tools.map((tool) => tool.name).sort();
  result.valid = validateMessage({ protocol: 1, type: 'manifest', clientId: agent.clientId, rev: agent.rev, tools: agent.tools }, 'toAgent').ok;

  // Laravel Echo, with a stand-in Echo and fetch: the page's manifest is POSTed.
  const posted = [];
  const echo = echoTransport({
    echo: { private: () => ({ listen() {}, stopListening() {} }) },
    channel: 'toolmark.1.1',
    fetch: async (url, init) => {
      posted.push(JSON.parse(init.body).type);
      return { ok: true, status: 204 };
    },
  });
  const detachEcho = tm.use(bridge({ transport: echo }));
  result.echo = await until(() => posted.includes('manifest'));
  detachEcho();
  echo.close();

  // WebSocket, to the server named by ?ws= (the harness runs one).
  const url = new URLSearchParams(location.search).get('ws');
  if (url) tm.use(bridge({ transport: websocketTransport({ url }) }));

  // postMessage, to this window itself: built, then closed.
  postMessageTransport({ target: window, targetOrigin: location.origin, allowedOrigins: [location.origin] }).close();

  // WebMCP, with a stand-in model context.
  const registered = [];
  tm.use(webmcp({ modelContext: { registerTool: (tool) => registered.push(tool.name) } }));
  result.webmcp = await until(() => registered.length > 0);

  // The React hook: the pending list rendered by React.
  const needs = await agent.call('signup.submit', {}, { timeoutMs: 5000 });
  result.needs = needs.status;
  const host = document.querySelector('#react');
  function Pending() {
    const { pending } = usePendingConfirmations(tm);
    return createElement('span', null, `pending ${pending.length}`);
  }
  createRoot(host).render(createElement(Pending));
  result.react = await until(() => host.textContent === 'pending 1');

  // A run that went wrong never says done.
  const expected = {
    version: 1, id: 36, llmName: 'cart__add', path: 2, error: 'schema_conversion_failed', schemas: true,
    valid: true, echo: true, webmcp: true, needs: 'needs_confirmation', react: true,
  };
  for (const [key, value] of Object.entries(expected)) {
    if (result[key] !== value) throw new Error(`${key}: ${JSON.stringify(result[key])}, expected ${JSON.stringify(value)}`);
  }
  window.result = result;
  document.querySelector('#result').textContent = JSON.stringify(result);
  document.title = 'done';
}

main().catch((error) => console.error(error));
