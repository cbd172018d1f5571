// A client-side agent loop's smallest app: one tool, the in-page channel, one call.
import { createToolmark } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { createInPageChannel } from '@toolmark/bridge-wasm/bridge/in-page';

const tm = createToolmark({ onError: (e) => console.warn(e.code, e.message) });
tm.scope('cart').register({
  name: 'add',
  description: 'Add an item to the cart',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  run: ({ sku }) => ({ added: sku }),
});
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
// No top-level await here: the app should not be what a bundler trips on.
agent.call('cart.add', { sku: 'A1' }, { timeoutMs: 5000 }).then(
  (result) => {
    document.querySelector('#result').textContent = JSON.stringify(result);
    document.title = 'done';
  },
  (error) => console.error(error),
);
