// createInPageChannel(): both ends of a bridge in one JavaScript realm, for a
// client-side agent loop and tests. Not a security boundary.
// JS for now: the transports move to Rust (web-sys drivers) in their own issue.
import { newId } from '../index.js';

export function createInPageChannel() {
  const toPage = new Set();
  const toAgent = new Set();
  const confirmedListeners = new Set();
  const waiting = new Map(); // call/describe id → { resolve, timer }
  let closed = false;
  const latest = { clientId: undefined, rev: undefined, tools: [] };

  // Delivery is asynchronous, like any real channel, and copies what the page sends.
  const deliver = (listeners, value) =>
    queueMicrotask(() => {
      for (const listener of [...listeners]) listener(value);
    });

  const transport = {
    send(message) {
      if (closed) throw new Error('in-page channel is closed');
      deliver(toAgent, JSON.parse(JSON.stringify(message)));
    },
    onMessage(callback) {
      toPage.add(callback);
      return () => toPage.delete(callback);
    },
    close() {
      closed = true;
      toPage.clear();
    },
  };

  // The agent end watches everything the page sends.
  toAgent.add((message) => {
    if (!message || typeof message !== 'object') return;
    if (message.type === 'manifest') {
      latest.clientId = message.clientId;
      latest.rev = message.rev;
      latest.tools = message.tools;
    } else if (message.type === 'changed') {
      latest.clientId = message.clientId;
      latest.rev = message.rev;
    } else if (message.type === 'result') {
      const entry = waiting.get(message.id);
      if (entry) {
        waiting.delete(message.id);
        if (entry.timer) clearTimeout(entry.timer);
        entry.resolve(message.result);
      }
    } else if (message.type === 'confirmed') {
      for (const listener of [...confirmedListeners]) listener(message);
    }
  });

  function request(message, timeoutMs) {
    return new Promise((resolve, reject) => {
      const entry = { resolve, timer: undefined };
      waiting.set(message.id, entry);
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => {
          waiting.delete(message.id);
          // Rule 3: a missing result maps to a timeout on the agent side, and the page is told to stop.
          agent.cancel(message.id);
          const error = new Error(`no result for ${message.type} ${message.id} within ${timeoutMs} ms`);
          error.name = 'TimeoutError';
          reject(error);
        }, timeoutMs);
      }
      agent.send(message);
    });
  }

  const agent = {
    /** Delivers the value to the page as is, unvalidated. */
    send(value) {
      deliver(toPage, value);
    },
    onMessage(callback) {
      toAgent.add(callback);
      return () => toAgent.delete(callback);
    },
    get clientId() {
      return latest.clientId;
    },
    get rev() {
      return latest.rev;
    },
    get tools() {
      return latest.tools;
    },
    /** Only an absent input defaults to {}; `null` is sent as null. `options.id` replaces the fresh id. */
    call(tool, input, options = {}) {
      const id = options.id === undefined ? newId() : options.id;
      const message = { protocol: 1, type: 'call', clientId: latest.clientId, id, tool, input: input === undefined ? {} : input };
      if (options.rev !== undefined) message.rev = options.rev;
      return request(message, options.timeoutMs);
    },
    describe(tool, options = {}) {
      return request({ protocol: 1, type: 'describe', clientId: latest.clientId, id: newId(), tool }, options.timeoutMs);
    },
    cancel(id) {
      agent.send({ protocol: 1, type: 'cancel', clientId: latest.clientId, id });
    },
    onConfirmed(callback) {
      confirmedListeners.add(callback);
      return () => confirmedListeners.delete(callback);
    },
  };

  return { transport, agent };
}
