// The demo: a page registers tools; a scripted agent calls them through the
// bridge, exactly as a server-side agent would over a real transport; a
// human approves the consequential one. Run with `npm run demo`.
//
//   node examples/demo/main.mjs            # approve the sign-up
//   node examples/demo/main.mjs --reject   # reject it
import { createToolmark } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';

const reject = process.argv.includes('--reject');
const show = (who, value) => console.log(`${who.padEnd(6)} ${JSON.stringify(value)}`);

// --- the page: an embedded sign-up form and its tools -----------------------
const form = { email: '', plan: 'free', password: '' };
const tm = createToolmark({ onError: (e) => show('error', e) });
const signup = tm.scope('signup');
signup.register({
  name: 'fill',
  title: 'Fill the sign-up form',
  description: 'Fill fields of the sign-up form.',
  inputSchema: {
    type: 'object',
    properties: {
      email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$' },
      plan: { enum: ['free', 'pro'] },
      password: { type: 'string', minLength: 8 },
    },
    additionalProperties: false,
  },
  run(input) {
    Object.assign(form, input);
    return { filled: Object.keys(input) };
  },
});
signup.register({
  name: 'submit',
  title: 'Submit the sign-up form',
  description: 'Create the account. A human confirms first.',
  hints: { consequential: true },
  sensitive: ['password'],
  summary: () => `Create an account for ${form.email} on the ${form.plan} plan`,
  changes: () => Object.entries(form).map(([path, after]) => ({ path, after })),
  run: () => ({ account: 'acct_1', email: form.email }),
});

const { transport, agent } = createInPageChannel();
agent.onMessage((message) => show('page→', message));
tm.use(bridge({ transport }));

// --- the agent: a scripted client-side loop ----------------------------------
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
await settle();
console.log(`\nThe page ${agent.clientId} offers: ${agent.tools.map((t) => t.name).join(', ')}\n`);

const say = (call) => show('agent', call);
say({ describe: 'signup.fill' });
await agent.describe('signup.fill');
say({ call: 'signup.fill', input: { email: 'not an email' } });
await agent.call('signup.fill', { email: 'not an email' });
say({ call: 'signup.fill', input: { email: 'ann@example.com', plan: 'pro', password: 'correct horse' } });
await agent.call('signup.fill', { email: 'ann@example.com', plan: 'pro', password: 'correct horse' });
say({ call: 'signup.submit', input: {} });
const request = await agent.call('signup.submit', {});

// --- the human, in the page's confirmation UI --------------------------------
const [pending] = tm.pendingConfirmations();
console.log(`\nhuman  sees "${pending.summary}" and ${reject ? 'rejects' : 'approves'} it\n`);
const confirmed = new Promise((resolve) => agent.onConfirmed(resolve));
await tm.confirmPending(request.confirmId, !reject);
await confirmed;
await settle();
console.log(`\nThe agent heard: ${JSON.stringify((await confirmed).result)}`);
