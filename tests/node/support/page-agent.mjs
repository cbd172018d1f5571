// Test harness for tests/node/rules.test.mjs: a page (createToolmark + bridge)
// wired to the agent end of createInPageChannel(). The test plays the agent by
// sending raw protocol messages; everything the page sends is recorded and
// checked against validateMessage(m, 'toAgent').
import assert from 'node:assert/strict';

import { createToolmark, newId } from '../../../pkg/index.js';
import { bridge } from '../../../pkg/bridge/index.js';
import { createInPageChannel } from '../../../pkg/bridge/in-page.js';
import { validateMessage } from '../../../pkg/protocol/index.js';

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const EXPIRED_MESSAGE = 'The confirmation expired or was already used';

/** One macrotask turn: lets microtask-based channel delivery settle. */
export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A few turns: enough for a message to reach the page, be handled and answered. */
export async function flush(turns = 8) {
  for (let i = 0; i < turns; i++) await tick();
}

/** Waits (in setImmediate turns, never sleeps) until `predicate()` is truthy. */
export async function until(predicate, what = 'condition', turns = 5000) {
  for (let i = 0; i < turns; i++) {
    const value = predicate();
    if (value) return value;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A promise with its resolve/reject exposed. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A tool run that settles when the signal aborts (rejecting with its reason). */
export function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Creates a page and an agent.
 * @param {object} [options]
 * @param {object} [options.toolmark]  createToolmark options
 * @param {object} [options.bridge]    bridge options besides transport
 * @param {boolean} [options.attach]   attach the bridge right away (default true)
 * @param {(m: object) => boolean} [options.failSend]  the transport's send throws for these messages
 * @param {boolean} [options.failClose] the transport's close throws (after closing)
 */
export function page(options = {}) {
  const tm = createToolmark(options.toolmark ?? {});
  const errors = [];
  tm.events.on('error', (e) => errors.push(e));
  const h = {
    tm,
    errors,
    /** Every page→agent message, in arrival order. */
    sent: [],
    /** page→agent messages that failed validateMessage(m, 'toAgent'). */
    invalidOut: [],
    /** Every agent→page value that reached the bridge's transport. */
    inbound: [],
    closes: 0,
    detach: undefined,
    channel: undefined,
  };

  function connect() {
    const { transport, agent } = createInPageChannel();
    agent.onMessage((m) => {
      h.sent.push(m);
      const verdict = validateMessage(m, 'toAgent');
      if (!verdict.ok) h.invalidOut.push({ message: m, errors: verdict.errors });
    });
    // The bridge's transport: the channel's, recording what reaches the page.
    const recorded = {
      send: (m) => {
        if (options.failSend && options.failSend(m)) throw new Error('send failed (test transport)');
        return transport.send(m);
      },
      onMessage: (cb) =>
        transport.onMessage((m) => {
          h.inbound.push(m);
          cb(m);
        }),
      close: () => {
        h.closes += 1;
        transport.close();
        if (options.failClose) throw new Error('close failed (test transport)');
      },
    };
    h.agent = agent;
    h.channel = { transport: recorded, agent };
    return recorded;
  }

  h.attach = (bridgeOptions = options.bridge ?? {}) => {
    const transport = connect();
    h.detach = tm.use(bridge({ transport, ...bridgeOptions }));
    return h.detach;
  };

  /** The page's clientId, from the first manifest it sent. */
  let clientId;
  Object.defineProperty(h, 'clientId', {
    get() {
      if (clientId === undefined) {
        const first = h.sent.find((m) => m && (m.type === 'manifest' || m.type === 'changed'));
        clientId = first ? first.clientId : undefined;
      }
      return clientId;
    },
  });

  h.manifests = () => h.sent.filter((m) => m.type === 'manifest');
  h.lastManifest = () => h.manifests().at(-1);
  h.changes = () => h.sent.filter((m) => m.type === 'changed');
  h.results = (id) => h.sent.filter((m) => m.type === 'result' && (id === undefined || m.id === id));
  h.confirmeds = (confirmId) =>
    h.sent.filter((m) => m.type === 'confirmed' && (confirmId === undefined || m.confirmId === confirmId));
  h.errorsOf = (code) => errors.filter((e) => e.code === code);

  /** Sends a raw value to the page, as is. */
  h.send = (value) => h.agent.send(value);

  /** A protocol-1 message addressed to this page. */
  h.msg = (type, fields = {}) => ({ protocol: 1, type, clientId: h.clientId, ...fields });

  /** Sends a raw `call`; returns its id. */
  h.call = (tool, input = {}, extra = {}) => {
    const id = extra.id ?? newId();
    const message = h.msg('call', { id, tool, input });
    if (extra.rev !== undefined) message.rev = extra.rev;
    h.send(message);
    return id;
  };

  /** Sends a raw `describe`; returns its id. */
  h.describe = (tool, extra = {}) => {
    const id = extra.id ?? newId();
    h.send(h.msg('describe', { id, tool }));
    return id;
  };

  /** Sends a raw `cancel`. */
  h.cancel = (id) => h.send(h.msg('cancel', { id }));

  /** Waits for the (single) result of `id` and returns its ToolResult. */
  h.result = async (id) => {
    const message = await until(() => h.results(id)[0], `result ${id}`);
    return message.result;
  };

  /** Sends a call and waits for its result. */
  h.callAndWait = async (tool, input = {}, extra = {}) => h.result(h.call(tool, input, extra));

  /** Waits until the page has sent a manifest (after attach). */
  h.ready = () => until(() => h.clientId, 'first manifest');

  /**
   * Invariants of every test: each page→agent message is valid 'toAgent',
   * no timeout outcome is ever sent (rule 3), every id is answered at most once (rule 2).
   */
  h.check = () => {
    assert.deepEqual(h.invalidOut, [], 'every page→agent message passes validateMessage(m, "toAgent")');
    for (const m of h.sent) {
      const result = m.result;
      if (result) assert.notEqual(result.status, 'timeout', 'the page never sends timeout (rule 3)');
      assert.equal(m.protocol, 1);
    }
    const seen = new Map();
    for (const m of h.results()) seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
    for (const [id, count] of seen) assert.equal(count, 1, `id ${id} answered exactly once`);
    const confirmedSeen = new Map();
    for (const m of h.confirmeds()) confirmedSeen.set(m.confirmId, (confirmedSeen.get(m.confirmId) ?? 0) + 1);
    for (const [id, count] of confirmedSeen) assert.equal(count, 1, `confirmId ${id} confirmed once`);
  };

  if (options.attach !== false) h.attach();
  return h;
}

// Node 20 calls its mocked timers experimental and says so on their first
// use, in every run; these tests take them knowingly (stable from Node 23),
// so that one warning is not printed. Every other warning is.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  if (String(warning?.message ?? warning).startsWith('The MockTimers API is an experimental feature')) return;
  return emitWarning.call(this, warning, ...rest);
};

/** A fake clock for `now`, advanced together with node:test's mocked setTimeout. */
export function fakeClock(t, start = 1_700_000_000_000) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const clock = {
    value: start,
    now: () => clock.value,
    async advance(ms) {
      clock.value += ms;
      t.mock.timers.tick(ms);
      await flush();
    },
  };
  return clock;
}
