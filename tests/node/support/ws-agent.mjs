// A real `ws` WebSocketServer on 127.0.0.1 playing the server/agent end of a
// websocketTransport: it records connection attempts, open sockets and frames.
import { WebSocketServer } from 'ws';

/** Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws). */
export async function waitFor(check, { timeoutMs = 5000, intervalMs = 5, what = 'condition' } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * startWsAgent({ port? }): { url, port, attempts, sockets, frames, accept, latest(), close() }
 * - attempts: performance.now() of every handshake attempt (accepted or refused)
 * - accept: set to false to refuse handshakes with HTTP 503 (the "server is down")
 * - frames: every inbound frame as { socket, text, json }
 * - onConnection: called with each accepted socket (e.g. to close it at once)
 */
export async function startWsAgent({ port: listenPort = 0 } = {}) {
  const state = {
    attempts: [],
    sockets: [],
    frames: [],
    closes: [], // { code, reason } of sockets closed by the client or server
    accept: true,
    onConnection: undefined,
  };
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: listenPort,
    verifyClient: (_info, done) => {
      state.attempts.push(performance.now());
      if (state.accept) done(true);
      else done(false, 503, 'down');
    },
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (socket) => {
    state.sockets.push(socket);
    socket.on('message', (data, isBinary) => {
      const text = isBinary ? undefined : data.toString();
      let json;
      try {
        json = text === undefined ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      state.frames.push({ socket, text, json });
    });
    socket.on('close', (code, reason) => state.closes.push({ socket, code, reason: reason.toString() }));
    state.onConnection?.(socket);
  });
  const { port } = wss.address();
  return Object.assign(state, {
    url: `ws://127.0.0.1:${port}`,
    port,
    latest: () => state.sockets[state.sockets.length - 1],
    /** JSON frames of one type (page → agent messages). */
    messages: (type) => state.frames.filter((f) => f.json && (type === undefined || f.json.type === type)).map((f) => f.json),
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  });
}

/**
 * Cleanups run after each test (the latest first), and `agentServer()`: a
 * `startWsAgent()` closed by them.
 */
export function perTestCleanups(afterEach) {
  const cleanups = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function agentServer() {
    const server = await startWsAgent();
    cleanups.push(() => server.close());
    return server;
  }
  return { cleanups, agentServer };
}
