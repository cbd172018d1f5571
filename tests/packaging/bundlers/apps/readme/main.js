// The README's "Install and use" app, as written there, except that the
// WebSocket URL comes from the page (?ws=…) so that a test can point it at a
// local server.
import { createToolmark } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { websocketTransport } from '@toolmark/bridge-wasm/bridge/websocket';

const tm = createToolmark({ onError: (e) => console.warn(e.code, e.message) });
const form = document.forms.namedItem('signup');

const signup = tm.scope('signup');
signup.register({
  name: 'fill',                                   // → 'signup.fill'
  description: 'Fill the sign-up form',
  inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  run: ({ email }, { signal, caller, callId }) => {
    const field = form?.elements.namedItem('email');
    if (field instanceof HTMLInputElement) field.value = email;
    return { filled: ['email'] };
  },
});
signup.register({
  name: 'submit',
  description: 'Submit the sign-up form',
  hints: { consequential: true },                 // the agent gets needs_confirmation
  run: () => {
    form?.requestSubmit();
    return { submitted: true };
  },
});

const url = new URLSearchParams(location.search).get('ws') ?? 'wss://example.com/toolmark';
const detach = tm.use(bridge({ transport: websocketTransport({ url }) }));

// The confirmation UI: a list of what waits, each with Approve and Reject.
const list = document.querySelector('ul#pending');
tm.subscribePending(() => {
  list?.replaceChildren(
    ...tm.pendingConfirmations().map(({ confirmId, summary }) => {
      const item = document.createElement('li');
      const approve = Object.assign(document.createElement('button'), {
        textContent: 'Approve',
        onclick: () => tm.confirmPending(confirmId, true), // runs the tool as caller 'human', sends `confirmed`
      });
      const reject = Object.assign(document.createElement('button'), {
        textContent: 'Reject',
        onclick: () => tm.confirmPending(confirmId, false), // sends `confirmed` with `cancelled`
      });
      item.append(summary, approve, reject);
      return item;
    }),
  );
});
