// Code that runs without a DOM (a Node agent loop, a test harness): every
// entry point's declarations compile with lib es2023 only and no @types/node.
import { createToolmark, formTools, newId, type AbortSignalLike, type FormElementLike, type ToolResult } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { createInPageChannel } from '@toolmark/bridge-wasm/bridge/in-page';
import { echoTransport } from '@toolmark/bridge-wasm/bridge/echo';
import { postMessageTransport } from '@toolmark/bridge-wasm/bridge/post-message';
import { websocketTransport, type WebSocketLike } from '@toolmark/bridge-wasm/bridge/websocket';
import { validateMessage, type PageToAgentMessage } from '@toolmark/bridge-wasm/protocol';
import { usePendingConfirmations } from '@toolmark/bridge-wasm/react';
import { webmcp, type ModelContext } from '@toolmark/bridge-wasm/webmcp';

const tm = createToolmark({ dev: true });
tm.register({
  name: 'ping',
  description: 'Answers pong.',
  hints: { readOnly: true },
  run: (_input, ctx) => {
    const signal: AbortSignalLike = ctx.signal;
    return signal.aborted ? 'aborted' : 'pong';
  },
});

const { transport, agent } = createInPageChannel();
const dispose = tm.use(bridge({ transport }));
agent.onMessage((message: PageToAgentMessage) => {
  const checked = validateMessage(message, 'toAgent');
  if (!checked.ok) throw new Error(checked.errors.map((e) => `${e.path}: ${e.message}`).join('; '));
});
export const pong: Promise<ToolResult> = agent.call('ping', {});
dispose();

// A WebSocket class from a library such as `ws` (declared structurally here).
declare class NodeSocket implements WebSocketLike {
  constructor(url: string, protocols?: string | string[]);
  readonly readyState: number;
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: unknown) => void): void;
  removeEventListener(type: string, listener: (event: unknown) => void): void;
}
websocketTransport({
  url: 'wss://example.test/toolmark',
  WebSocket: NodeSocket,
  onOpen: (socket) => {
    const protocol: string = socket.protocol; // the instance type of the class passed in
    socket.send(JSON.stringify({ hello: protocol }));
  },
});

declare const form: FormElementLike;
formTools(form, { scope: tm.scope('contact') });

echoTransport({
  echo: { private: () => ({ listen: () => undefined, stopListening: () => undefined }) },
  channel: `toolmark.1.${newId()}`,
  fetch: async (url, init) => ({ ok: url.length > 0 && init.method === 'POST', status: 200 }),
});

declare const parentWindow: { postMessage(message: unknown, targetOrigin: string): void };
postMessageTransport({
  target: parentWindow,
  targetOrigin: 'https://app.example.test',
  allowedOrigins: ['https://app.example.test'],
  source: { addEventListener: () => undefined, removeEventListener: () => undefined },
});

export const hook: typeof usePendingConfirmations = usePendingConfirmations;

// A model context from a polyfill or a test double, with its own AbortSignal type.
declare const modelContext: ModelContext;
export const detachWebmcp: () => void = tm.use(webmcp({ modelContext }));
