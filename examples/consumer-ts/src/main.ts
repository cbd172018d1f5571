// A strict consumer of every entry point of @toolmark/bridge-wasm. It is only
// type-checked (tests/node/types.test.mjs runs tsc on it), never executed.
import {
  createToolmark,
  flatten,
  formTools,
  getPath,
  llmName,
  newId,
  setPath,
  ToolmarkError,
  type Caller,
  type FieldChange,
  type PendingConfirmation,
  type StandardSchemaV1,
  type Toolmark,
  type ToolContext,
  type ToolDefinition,
  type ToolManifest,
  type ToolManifestSummary,
  type ToolmarkErrorCode,
  type ToolmarkErrorEvent,
  type ToolmarkOptions,
  type ToolResult,
  type ToolScope,
} from '@toolmark/bridge-wasm';
import { bridge, type BridgeTransport } from '@toolmark/bridge-wasm/bridge';
import { echoTransport } from '@toolmark/bridge-wasm/bridge/echo';
import { websocketTransport } from '@toolmark/bridge-wasm/bridge/websocket';
import { postMessageTransport } from '@toolmark/bridge-wasm/bridge/post-message';
import { createInPageChannel, type DescribeResult } from '@toolmark/bridge-wasm/bridge/in-page';
import { webmcp, type ModelContext } from '@toolmark/bridge-wasm/webmcp';
import {
  PROTOCOL_VERSION,
  protocolSchemas,
  validateMessage,
  type AgentToPageMessage,
  type PageToAgentMessage,
} from '@toolmark/bridge-wasm/protocol';
import { usePendingConfirmations } from '@toolmark/bridge-wasm/react';
import pageToAgentSchema from '@toolmark/bridge-wasm/protocol/v1/page-to-agent.json' with { type: 'json' };
import agentToPageSchema from '@toolmark/bridge-wasm/protocol/v1/agent-to-page.json' with { type: 'json' };
import * as v from 'valibot';
import * as z from 'zod';

/** `true` only when A and B are the same type (not merely assignable): guards against `any`. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// --- registry --------------------------------------------------------------

let clock = 0;
const options: ToolmarkOptions = {
  dev: true,
  toolBudget: 40,
  confirmExpiryMs: 600_000,
  abortGraceMs: 5_000,
  now: () => clock,
  onError: (event: ToolmarkErrorEvent) => console.warn(event.code, event.message, event.tool ?? ''),
  policy: { inapp: { readOnly: 'allow', consequential: 'confirm', destructive: 'deny', untrustedContent: 'confirm', default: 'allow' } },
  confirmMode: { inapp: 'deferred' },
  onConfirm: async ({ tool, message }) => window.confirm(`${tool}: ${message}`),
};
const tm: Toolmark = createToolmark(options);
const rev: number = tm.rev;

// A JSON Schema tool: `run` gets what its parameter's annotation says, else
// `any` (the JSON the schema accepted; TypeScript does not read JSON Schemas).
const offGreet = tm.register({
  name: 'greet',
  title: 'Greet',
  description: 'Say hello.',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  hints: { readOnly: true },
  run(input: { name: string }, ctx) {
    const caller: Caller = ctx.caller;
    const aborted: boolean = ctx.signal.aborted;
    return { greeting: `Hello ${input.name}`, caller, aborted, callId: ctx.callId };
  },
});
offGreet();

tm.register({
  name: 'fill',
  description: 'Destructures its input as the README does.',
  inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  run({ email }) {
    const exact: Equal<typeof email, any> = true;
    return { filled: [email], exact };
  },
});

tm.register({
  name: 'untyped',
  description: 'Without a schema, input is unknown until narrowed.',
  run(input) {
    const exact: Equal<typeof input, unknown> = true;
    console.log(exact);
    const value: unknown = input;
    return typeof value === 'object' && value !== null ? Object.keys(value) : [];
  },
});

// A zod schema: `run` gets zod's output type (after coercion and transforms).
const Signup = z.object({
  age: z.coerce.number().int(),
  email: z.email(),
  name: z.string().transform((s) => s.toUpperCase()),
});
const signup: ToolScope = tm.scope('signup');
const fillDone: Array<() => void> = [];
fillDone.push(
  signup.register({
    name: 'fill',
    description: 'Fill the sign-up form.',
    inputSchema: Signup,
    sensitive: ['password'],
    summary: (input) => `Sign up ${input.email}`,
    changes: (input): FieldChange[] => [{ path: 'age', after: input.age }],
    snapshot: (input) => {
      const before = input.name;
      return () => console.log('restore', before);
    },
    async run(input, ctx: ToolContext) {
      const exact: Equal<typeof input, { age: number; email: string; name: string }> = true;
      console.log(exact);
      const age: number = input.age;
      const name: string = input.name;
      if (!(await ctx.confirm('Really?'))) return { skipped: true };
      return { age, name };
    },
  }),
);

// A valibot schema (its JSON Schema comes from @valibot/to-json-schema's toStandardJsonSchema in production).
const Order = v.object({ qty: v.pipe(v.string(), v.transform(Number)), sku: v.string() });
signup.register({
  name: 'order',
  description: 'Place an order.',
  inputSchema: Order,
  hints: { consequential: true },
  mode: 'stepwise',
  run: async (input) => {
    const exact: Equal<typeof input, { qty: number; sku: string }> = true;
    console.log(exact);
    const qty: number = input.qty;
    return { qty, sku: input.sku };
  },
});

// A Standard Schema output: `run` must return its input type.
tm.register({
  name: 'count',
  description: 'Count things.',
  outputSchema: z.object({ count: z.number() }),
  run: () => ({ count: 3 }),
});

// A definition kept apart from register, generic over its schema.
const remove: ToolDefinition<typeof Signup> = {
  name: 'remove',
  description: 'Delete the account.',
  inputSchema: Signup,
  hints: { destructive: true },
  run: (input) => input.email,
};
tm.register(remove);

const nested: ToolScope = signup.scope('address');
const scopeName: string = nested.name;
nested.dispose();

const controller = new AbortController();
const result: ToolResult = await tm.call('signup.fill', { age: '42', email: 'a@b.co', name: 'x' }, {
  caller: 'inapp',
  signal: controller.signal,
  rev,
});
switch (result.status) {
  case 'ok':
    console.log(result.data);
    break;
  case 'invalid':
    for (const issue of result.issues) console.log(issue.path, issue.message);
    break;
  case 'refused':
    console.log(result.code, result.message, result.rev);
    break;
  case 'needs_confirmation': {
    const final: ToolResult = await tm.confirmPending(result.confirmId, true);
    console.log(final.status, result.summary, result.changes);
    break;
  }
  case 'cancelled':
    console.log(result.by);
    break;
  case 'error':
    console.log(result.message);
    break;
}
await tm.call('greet', {}, { caller: 'human' });
// The caller defaults to 'human' (as the runtime has it).
const byDefault: ToolResult = await tm.call('greet', {});
// An absent input is {} (the protocol's "no input").
await tm.call('greet');
console.log(byDefault);

const summaries: ToolManifestSummary[] = tm.manifest('inapp');
const humanSummaries: ToolManifestSummary[] = tm.manifest('human');
const pending: PendingConfirmation[] = tm.pendingConfirmations();
for (const entry of pending) {
  const { confirmId, tool, summary, changes, expiresAt } = entry;
  console.log(confirmId, tool, summary, changes?.length, expiresAt);
}
const unsubscribe: () => void = tm.subscribePending(() => console.log(tm.pendingConfirmations().length));
unsubscribe();
const undone: ToolResult = await tm.undo(newId());
const offError: () => void = tm.events.on('error', (event) => console.log(event.code, event.tool));
offError();

try {
  tm.register({ name: 'bad name', description: '', run: () => undefined });
} catch (error) {
  if (error instanceof ToolmarkError) {
    const code: ToolmarkErrorCode = error.code;
    console.log(code, error.message);
  }
}

// --- helpers ---------------------------------------------------------------

const id: string = newId();

const llm: string = llmName('signup.fill');
const data = setPath({}, 'user.emails.0', 'a@b.co');
const got: unknown = getPath(data, 'user.emails.0');
const flat: Record<string, unknown> = flatten(data);
const flatPrefixed: Record<string, unknown> = flatten({ a: 1 }, 'root');

const form = document.querySelector('form');
if (form) {
  const offForm: () => void = formTools(form, { scope: tm.scope('contact'), sensitive: ['password'], title: 'Contact' });
  offForm();
}

// --- bridge and transports -------------------------------------------------

const { transport, agent } = createInPageChannel();
const detach: () => void = tm.use(bridge({ transport, onChange: 'manifest', caller: 'inapp', maxMessageBytes: 1 << 20 }));
tm.use(bridge({ transport: createInPageChannel().transport, onChange: 'changed' }));
const offWebMcp: () => void = tm.use(webmcp());
declare const modelContext: ModelContext;
tm.use(webmcp({ modelContext }));
offWebMcp();

const offMessages = agent.onMessage((message: PageToAgentMessage) => {
  if (message.type === 'manifest') console.log(message.rev, message.tools.map((t) => t.llmName));
});
offMessages();
agent.send({ anything: 'goes, unvalidated' });
const clientId: string | undefined = agent.clientId;
const agentRev: number | undefined = agent.rev;
const tools: ToolManifestSummary[] = agent.tools;
const called: ToolResult = await agent.call('greet', { name: 'Ada' }, { rev: agentRev ?? 0, timeoutMs: 1000 });
await agent.call('greet');
const myCallId: string = newId();
const cancellable: Promise<ToolResult> = agent.call('greet', null, { id: myCallId });
agent.cancel(myCallId);
await cancellable;
const described: DescribeResult = await agent.describe('greet', { timeoutMs: 1000 });
if (described.status === 'ok') {
  const schema: object | boolean = described.data.inputSchema;
  console.log(described.data.name, schema, described.data.outputSchema);
}
agent.cancel(newId());
const offConfirmed = agent.onConfirmed((message) => console.log(message.confirmId, message.result.status));
offConfirmed();
detach();

// A hand-written transport.
const custom: BridgeTransport = {
  send(message) {
    console.log(message.type, message.clientId);
  },
  onMessage(callback) {
    const listener = (event: MessageEvent<unknown>) => callback(event.data);
    window.addEventListener('message', listener);
    return () => window.removeEventListener('message', listener);
  },
};
tm.use(bridge({ transport: custom }));

// Any object with Laravel Echo's private/listen/stopListening (src/laravel-echo.ts uses the real class).
const echo = {
  private: (_channel: string) => ({
    listen: (_event: string, _callback: (payload: unknown) => void) => undefined,
    stopListening: (_event: string, _callback?: (payload: unknown) => void) => undefined,
  }),
};
const xsrfToken = (): string => decodeURIComponent(document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/)?.[1] ?? '');
const viaEcho = echoTransport({
  echo,
  channel: `toolmark.1.${newId()}`,
  event: '.toolmark.message',
  postUrl: '/toolmark/bridge',
  headers: () => ({ 'X-XSRF-TOKEN': xsrfToken() }),
  fetch: (url, init) => fetch(url, init),
});
tm.use(bridge({ transport: viaEcho }));

const viaSocket = websocketTransport({
  url: new URL('wss://example.test/toolmark'),
  protocols: ['toolmark.v1'] as const,
  maxDelayMs: 30_000,
  terminalCloseCodes: [4401, 4403],
  onOpen: async (socket) => {
    const native: WebSocket = socket; // the global WebSocket type by default
    native.send(JSON.stringify({ token: 'short-lived' }));
  },
  WebSocket,
});
tm.use(bridge({ transport: viaSocket }));
viaSocket.close();

const frame = document.createElement('iframe');
if (frame.contentWindow) {
  const viaPostMessage = postMessageTransport({
    target: frame.contentWindow,
    targetOrigin: 'https://widget.example.test',
    allowedOrigins: ['https://widget.example.test'],
    source: window,
  });
  tm.use(bridge({ transport: viaPostMessage }));
}
postMessageTransport({ target: window.parent, targetOrigin: 'https://app.example.test', allowedOrigins: ['https://app.example.test'] });

// --- protocol --------------------------------------------------------------

const version: 1 = PROTOCOL_VERSION;
const checked = validateMessage({ protocol: 1, type: 'cancel', clientId: id, id: newId() }, 'toPage');
if (checked.ok) {
  const message: AgentToPageMessage = checked.message;
  console.log(message.type);
} else {
  for (const error of checked.errors) console.log(error.path, error.message);
}
const outbound = validateMessage({}, 'toAgent');
if (outbound.ok) {
  const message: PageToAgentMessage = outbound.message;
  console.log(message.type);
}
const ids: ['urn:toolmark:protocol:v1:page-to-agent', 'urn:toolmark:protocol:v1:agent-to-page'] = [protocolSchemas.pageToAgent.$id, protocolSchemas.agentToPage.$id];
console.log(ids);
const schemaIds: [string, string] = [pageToAgentSchema.$id, agentToPageSchema.$id];
console.log(schemaIds);

// --- React (no React types needed by the declarations) -----------------------

export function PendingConfirmations(): null {
  const { pending: list, approve, reject } = usePendingConfirmations(tm);
  for (const entry of list) {
    void approve(entry.confirmId).then((final: ToolResult) => console.log(final.status));
    void reject(entry.confirmId);
  }
  return null;
}

// A Standard Schema of one's own.
const Even: StandardSchemaV1<number, number> = {
  '~standard': {
    version: 1,
    vendor: 'example',
    validate: (value) =>
      typeof value === 'number' && value % 2 === 0 ? { value } : { issues: [{ message: 'Expected an even number', path: [] }] },
  },
};
tm.register({ name: 'even', description: 'Takes an even number.', inputSchema: Even, run: (n) => n / 2 });

const exactPending: Equal<ReturnType<typeof usePendingConfirmations>['pending'], readonly PendingConfirmation[]> = true;
const exactDescribe: Equal<Extract<DescribeResult, { status: 'ok' }>['data'], ToolManifest> = true;
console.log(exactPending, exactDescribe);

console.log(rev, scopeName, summaries, humanSummaries, undone, id, llm, got, flat, flatPrefixed, clientId, tools, called, version);

// --- misuse the declarations reject --------------------------------------

// @ts-expect-error caller must be 'human' or 'inapp'
await tm.call('greet', {}, { caller: 'robot' });
// @ts-expect-error the caller is a Caller when given
await tm.call('greet', {}, { caller: undefined as unknown as number });
// @ts-expect-error the bridge runs calls as 'inapp' only
bridge({ transport, caller: 'human' });
// @ts-expect-error onChange is 'manifest' or 'changed'
bridge({ transport, onChange: 'always' });
// @ts-expect-error a tool needs run
tm.register({ name: 'norun', description: 'No run.' });
// @ts-expect-error a tool needs a description
tm.register({ name: 'nodescription', run: () => 1 });
// @ts-expect-error hints are readOnly/consequential/destructive/untrustedContent (typo: readonly)
tm.register({ name: 'typo', description: 'x', hints: { readonly: true }, run: () => 1 });
// @ts-expect-error mode is 'stepwise' only
tm.register({ name: 'mode', description: 'x', mode: 'wizard', run: () => 1 });
// @ts-expect-error run gets the zod output type: age is a number, not a string
tm.register({ name: 'wrong', description: 'x', inputSchema: Signup, run: (input: { age: string }) => input.age });
// @ts-expect-error run must return the output schema's input type
tm.register({ name: 'count2', description: 'x', outputSchema: z.object({ count: z.number() }), run: () => ({ count: 'three' }) });
// @ts-expect-error input without a schema is unknown
tm.register({ name: 'unknown', description: 'x', run: (input) => input.field });
// @ts-expect-error 'allow' would run consequential tools for the agent without a human
createToolmark({ policy: { inapp: { consequential: 'allow' } } });
// @ts-expect-error policy decisions are allow/confirm/deny/hide
createToolmark({ policy: { inapp: { readOnly: 'maybe' } } });
// @ts-expect-error confirmMode.inapp is 'deferred' or 'none'
createToolmark({ confirmMode: { inapp: 'inline' } });
// @ts-expect-error tm.use takes plugins made by bridge(...)
tm.use({ attach() {} });
// @ts-expect-error a transport needs onMessage
bridge({ transport: { send() {} } });
// @ts-expect-error postMessageTransport needs allowedOrigins
postMessageTransport({ target: window.parent, targetOrigin: 'https://app.example.test' });
// @ts-expect-error echoTransport needs a channel
echoTransport({ echo });
// @ts-expect-error websocketTransport needs a url
websocketTransport({});
// @ts-expect-error validateMessage directions are 'toPage' and 'toAgent'
validateMessage({}, 'sideways');
// @ts-expect-error events are 'error' only
tm.events.on('change', () => {});
// @ts-expect-error pendingConfirmations from the hook are read-only
usePendingConfirmations(tm).pending.push(pending[0]!);
// @ts-expect-error agent.describe's ok data is a ToolManifest
const notManifest: number = described.status === 'ok' ? described.data : 0;
void notManifest;
