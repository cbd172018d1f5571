// The built package as the Node benches load it, and the module's
// WebAssembly memory size read through the WebSocket transport's test hook
// (a static of its class; benches/soak.mjs reads it the same way).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The package in `dir` (default pkg/): its entry points' exports. */
export async function loadPackage(dir = 'pkg') {
  const base = pathToFileURL(resolve(dir) + '/').href;
  const { createToolmark } = await import(`${base}index.js`);
  const { bridge } = await import(`${base}bridge/index.js`);
  const { createInPageChannel } = await import(`${base}bridge/in-page.js`);
  const { websocketTransport } = await import(`${base}bridge/websocket.js`);
  return { createToolmark, bridge, createInPageChannel, websocketTransport };
}

/** A socket that never opens: the probe's transport sends nothing. */
class Unopened {
  constructor() {
    this.readyState = 0;
  }
  addEventListener() {}
  removeEventListener() {}
  close() {}
}

/** `() => bytes` of the module's WebAssembly memory. */
export function memoryProbe({ websocketTransport }) {
  const probe = websocketTransport({ url: 'ws://127.0.0.1:9', WebSocket: Unopened });
  probe.close();
  return () => probe.constructor.__stats().memoryBytes;
}

/**
 * A registry of `scopes` scopes, each with a tool `s<i>.t` whose runs wait
 * until released, attached by a bridge to an in-page agent that has their
 * manifest (a burst of calls then piles up). `waiting` holds one release
 * per waiting run; a released run returns `settle(input)`.
 */
export async function waitingScopes({ createToolmark, bridge, createInPageChannel }, scopes, settle = () => null) {
  const tm = createToolmark({ onError: () => {} });
  const waiting = [];
  for (let s = 0; s < scopes; s++) {
    tm.scope(`s${s}`).register({
      name: 't',
      description: 'Waits until released',
      hints: { readOnly: true },
      run: (input) => new Promise((resolve) => waiting.push(() => resolve(settle(input)))),
    });
  }
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < scopes) await new Promise((r) => setImmediate(r));
  return { tm, agent, waiting };
}
