// createInPageChannel(): both ends of a bridge in one JS realm, for a
// client-side agent loop and tests (API.md, "Bridge and transports"). JS
// because it is a helper, not one of the card's transports: it only moves
// JS values between JS callbacks (in wasm each step was a crossing), and the
// bridge talks to its page end through the public transport interface like
// any app's. Request ids are the core's newId. Not a security boundary.
//
// - Delivery is asynchronous, one microtask per message; the listeners are
//   those subscribed when it runs. What the page end is given to send is
//   delivered as it is: the bridge hands each message as a fresh object of
//   its own (parsed from the core's text), so a second copy here would only
//   cost time (a tenth of the in-page round trip: docs/benchmarks.md). Only
//   when agent.onMessage has listeners, which may change what they get, do
//   the parts the agent end keeps (a call's result, the manifest's tools,
//   the message onConfirmed's subscribers share) get a JSON copy each.
//   What the agent sends with `send` is delivered as it is, unvalidated. A
//   throwing listener stops that delivery and its error is thrown from the
//   microtask. A throwing `onStatus` or `onConfirmed` subscriber stops no
//   other (nor, for `onConfirmed`, the delivery): its error is thrown from
//   a microtask of its own, as the transports report theirs.
// - The agent end's requests (call, describe) are checked and written as
//   JSON when they are made: one the page would drop and never answer (an
//   input JSON cannot copy: a cycle, a BigInt, a throwing getter or proxy,
//   a function or a symbol; a tool name or id that is no non-empty string;
//   half a surrogate pair in the tool name, id or input, which the page
//   reads as malformed JSON; a rev that is no whole number >= 0), and a
//   call whose id a request
//   still waiting for its result has, reject at once with a ToolmarkError
//   `invalid_argument` and are neither sent nor kept waiting. The page end
//   gets the plain copy of that text, so what the bridges read is what was
//   checked.
// - The agent end watches what the page sends before its own listeners do:
//   the latest manifest's (or changed's) clientId and rev, the manifest's
//   tools, the result of each request it made, and `confirmed` messages. A
//   request with timeoutMs rejects with a ToolmarkError `timeout` and sends
//   `cancel` when no result comes in time (rule 3: a timeout is the agent
//   side's), however long the timeout: setTimeout fires at once past
//   2^31-1 ms, so a longer one waits in steps. A timeoutMs that is no
//   finite number >= 0 is refused at once with `invalid_argument`.
// - Before the first manifest the page's clientId is unknown and the page
//   drops a message without it: a request made then waits, in order, and
//   goes out with the first manifest's (or changed's) clientId. At most
//   MAX_WAITING_FOR_MANIFEST wait; one more rejects at once. A waiting
//   request that times out sends nothing; one cancelled resolves
//   `cancelled signal`, the page's answer to a call cancelled before it ran.
// - Once the page end is closed (close(), or its bridge detached) nothing
//   answers: the requests still waiting reject with `transport_closed`,
//   after what the page sent before the close is delivered, and so do new
//   ones.
import { ToolmarkError } from '../errors.js';
import { wasm } from '../internal.js';

/** Requests kept until the first manifest tells the page's clientId. */
const MAX_WAITING_FOR_MANIFEST = 100;

const closedError = () => new ToolmarkError('transport_closed', 'createInPageChannel: the page end is closed (create a new channel to attach again)');

/** `Name: message` for an Error, else String(value) (as the core's reports say it). */
function detail(why) {
  try {
    return why instanceof Error ? `${why.name}: ${why.message}` : String(why);
  } catch {
    return '[object]';
  }
}

function notCopyable(what, why) {
  return new ToolmarkError('invalid_argument', `createInPageChannel: ${what}${why === undefined ? '' : ` (${detail(why)})`}`);
}

/** JSON.stringify(value), or throws why it wrote nothing (`undefined` for a value JSON leaves out). */
function jsonText(value) {
  const text = JSON.stringify(value);
  if (typeof text !== 'string') throw undefined; // eslint-disable-line no-throw-literal
  return text;
}

const asItIs = (value) => value;

/**
 * A JSON copy of `value` (JSON.parse(JSON.stringify(value))); undefined
 * stays undefined. A value JSON cannot copy (a BigInt or a cycle, which only
 * a `transport.send` of the app's own can carry) is kept as it is, as it is
 * without listeners: its request must still settle.
 */
function jsonCopy(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return value;
  }
}

function tryJson(value) {
  try {
    return { text: jsonText(value) };
  } catch (why) {
    return { why };
  }
}

const INPUT = 'agent.call: the input is not JSON-copyable';

/** How a refused value reads in its error: a string as JSON (so '' shows), a BigInt with its n, else as String writes it. */
function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'bigint' ? `${value}n` : detail(value);
}

function refused(what, value) {
  return new ToolmarkError('invalid_argument', `createInPageChannel: ${what} (got ${shown(value)})`);
}

/** setTimeout's longest delay: a longer one would fire at once. */
const MAX_DELAY_MS = 0x7fffffff;

/** Calls `run` after `ms`, in steps setTimeout takes; `entry.timer` is the step pending, for clearTimeout. */
function runAfter(entry, ms, run) {
  const step = Math.min(ms, MAX_DELAY_MS);
  entry.timer = setTimeout(() => (ms > step ? runAfter(entry, ms - step, run) : run()), step);
}

/**
 * Call message `message` (its other fields checked: strings and a whole
 * number) with its input as JSON copies it, or the ToolmarkError that says
 * what in the input JSON cannot copy. JSON leaves an input that is a
 * function or a symbol (or whose toJSON returns one) out without an error,
 * and the page drops a call without one: refused here too.
 */
function callCopy(message, input) {
  if (typeof input === 'function') throw notCopyable(INPUT, 'a function');
  if (typeof input === 'symbol') throw notCopyable(INPUT, 'a symbol');
  const own = tryJson(input);
  if (own.text === undefined) throw notCopyable(INPUT, own.why);
  if (LONE_ESCAPE.test(own.text)) throw notCopyable(INPUT, 'a string holds half a surrogate pair, which the page drops as malformed');
  return { ...message, input: JSON.parse(own.text) };
}

// Half a surrogate pair in JSON.stringify's text: the escape it writes for
// one (a pair is written as its character) after an even run of
// backslashes (after an odd run, the backslash is a character of the text).
const LONE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/;
// A lone surrogate in a string (in a `u` pattern \p{Cs} matches no pair).
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The refusal of a request's tool name, id or rev the page would drop
 * (agent-to-page.json: non-empty strings, a whole number >= 0), or undefined.
 */
function misshapen(kind, tool, id, rev) {
  if (typeof tool !== 'string' || tool === '') return refused(`agent.${kind}: the tool name must be a non-empty string`, tool);
  if (typeof id !== 'string' || id === '') return refused(`agent.${kind}: options.id must be a non-empty string`, id);
  for (const [what, text] of [['the tool name', tool], ['options.id', id]]) {
    if (LONE_SURROGATE.test(text)) return refused(`agent.${kind}: ${what} holds half a surrogate pair, which the page drops as malformed`, text);
  }
  if (rev !== undefined && !(Number.isInteger(rev) && rev >= 0)) {
    return refused(`agent.${kind}: options.rev must be a registry revision, a whole number >= 0`, rev);
  }
  return undefined;
}

/**
 * The refusal of options that are no object, as tm.call refuses them
 * (undefined and null stand for none; a function is no options object),
 * or undefined.
 */
function notOptions(kind, options) {
  if (options === undefined || options === null || typeof options === 'object') return undefined;
  return refused(`agent.${kind}: options must be an object`, options);
}

/** Calls every listener in `listeners` (a copy taken by the caller) with `value`. */
function callEach(listeners, value) {
  for (const listener of listeners) listener(value);
}

/** Throws `error` from a queueMicrotask of its own, where the host reports it as uncaught. */
function rethrow(error) {
  queueMicrotask(() => {
    throw error;
  });
}

/** callEach, where a listener's throw stops no other and is reported as uncaught, as the transports do. */
function tellEach(listeners, value) {
  for (const listener of listeners) {
    try {
      listener(value);
    } catch (error) {
      rethrow(error);
    }
  }
}

const resolved = Promise.resolve();

/**
 * Runs `run` in a microtask through a kept resolved promise's `then`:
 * queueMicrotask's queue and order at a fraction of its cost per call
 * (docs/benchmarks.md, "One transport interface"); a throw is
 * rethrown from a queueMicrotask of its own, where the host reports it.
 */
function later(run) {
  resolved.then(() => {
    try {
      run();
    } catch (error) {
      rethrow(error);
    }
  });
}

function subscribe(set, callback) {
  set.add(callback);
  return () => set.delete(callback);
}

export function createInPageChannel() {
  const toPage = new Set(); // transport.onMessage callbacks: what the agent sends
  const toAgent = new Set(); // agent.onMessage callbacks: what the page sends
  const confirmed = new Set();
  const waiting = new Map(); // request id → { resolve, reject, timer }
  let beforeManifest = []; // [id, message] of requests made before the first manifest
  let latest = { clientId: undefined, rev: undefined, tools: [] };
  let closed = false;

  const toPageLater = (message) => later(() => callEach([...toPage], message));
  const agentMessage = (type, id) => ({ protocol: 1, type, clientId: latest.clientId, id });

  /**
   * The agent end's view of a page → agent message, before its listeners;
   * `shared` when there are listeners, whose changes to the message must
   * not reach what is kept from it.
   */
  function watch(message, shared) {
    if (message === null || typeof message !== 'object') return;
    const own = shared ? jsonCopy : asItIs;
    if (message.type === 'result') {
      const entry = waiting.get(message.id);
      if (entry === undefined) return;
      waiting.delete(message.id);
      clearTimeout(entry.timer);
      entry.resolve(own(message.result));
    } else if (message.type === 'manifest' || message.type === 'changed') {
      const { clientId, rev } = message;
      latest = { clientId, rev, tools: message.type === 'manifest' ? own(message.tools) : latest.tools };
      if (clientId === undefined) return;
      const ready = beforeManifest;
      beforeManifest = [];
      for (const [, request] of ready) {
        request.clientId = clientId;
        toPageLater(request);
      }
    } else if (message.type === 'confirmed') {
      // A subscriber's throw must not keep the message from the onMessage listeners.
      if (confirmed.size > 0) tellEach([...confirmed], own(message));
    }
  }

  /** Takes request `id` out of those waiting for the first manifest; false when it is not there. */
  function unqueue(id) {
    const before = beforeManifest.length;
    beforeManifest = beforeManifest.filter(([waitingId]) => waitingId !== id);
    return beforeManifest.length !== before;
  }

  /**
   * Sends request `copy` (a plain copy of the message), or keeps it until
   * the first manifest, and resolves with its result; with `timeoutMs`,
   * rejects with a ToolmarkError `timeout` and sends `cancel` when none
   * comes in time.
   */
  function request(kind, id, copy, timeoutMs) {
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
      return Promise.reject(refused(`agent.${kind}: options.timeoutMs must be a finite number >= 0`, timeoutMs));
    }
    if (closed) return Promise.reject(closedError());
    if (latest.clientId !== undefined) {
      toPageLater(copy);
    } else if (beforeManifest.length >= MAX_WAITING_FOR_MANIFEST) {
      return Promise.reject(new ToolmarkError(
        'queue_full',
        `createInPageChannel: no manifest from the page yet (is a bridge attached with tm.use(bridge({ transport }))?) and ${MAX_WAITING_FOR_MANIFEST} requests already wait for it`,
      ));
    } else {
      beforeManifest.push([id, copy]);
    }
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: undefined };
      if (timeoutMs !== undefined) {
        runAfter(entry, timeoutMs, () => {
          if (waiting.get(id) === entry) waiting.delete(id);
          // Never sent: nothing to cancel.
          if (!unqueue(id)) toPageLater(agentMessage('cancel', id));
          reject(new ToolmarkError('timeout', `createInPageChannel: no result for ${kind} ${String(id)} within ${String(timeoutMs)} ms`));
        });
      }
      waiting.set(id, entry);
    });
  }

  // Both ends live in this realm: the page end is open until close().
  const statusListeners = new Set();
  const transport = {
    /** `open`, then `closed` (terminal) after close(). */
    get status() {
      return closed ? { state: 'closed', reason: 'closed by close()', terminal: true } : { state: 'open' };
    },
    /** Calls `callback(status)` when the state changes (once, at close); returns its unsubscribe. */
    onStatus: (callback) => subscribe(statusListeners, callback),
    /** Delivers `message` to the agent end. Throws once closed. */
    send(message) {
      if (closed) throw closedError();
      later(() => {
        const now = [...toAgent];
        watch(message, now.length > 0);
        callEach(now, message);
      });
    },
    /** Calls `callback(message)` with each agent → page value; returns its unsubscribe. */
    onMessage: (callback) => subscribe(toPage, callback),
    /** Stops the page end: `send` throws, its subscribers are dropped, the agent's waiting requests reject. */
    close() {
      if (closed) return;
      closed = true;
      toPage.clear();
      // Queued after the deliveries of what the page sent before the close.
      later(() => {
        beforeManifest = [];
        const ended = [...waiting.values()];
        waiting.clear();
        for (const entry of ended) {
          clearTimeout(entry.timer);
          entry.reject(closedError());
        }
      });
      const status = transport.status;
      const listeners = [...statusListeners];
      statusListeners.clear();
      // A subscriber's throw is its own: it fails neither close() nor the others.
      tellEach(listeners, status);
    },
  };

  const agent = {
    /** Delivers the value to the page as is, unvalidated. */
    send(message) {
      toPageLater(message);
    },
    onMessage: (callback) => subscribe(toAgent, callback),
    get clientId() {
      return latest.clientId;
    },
    get rev() {
      return latest.rev;
    },
    get tools() {
      return latest.tools;
    },
    /** A `call` (with options.id, or a fresh id), resolved with its result. Only an absent input is sent as {}. */
    call(tool, input, options) {
      const notObject = notOptions('call', options);
      if (notObject !== undefined) return Promise.reject(notObject);
      const { id = wasm.newId(), rev, timeoutMs } = options ?? {};
      const bad = misshapen('call', tool, id, rev);
      if (bad !== undefined) return Promise.reject(bad);
      // A second waiting entry under one id would leave the first unanswered.
      if (waiting.has(id)) {
        return Promise.reject(new ToolmarkError(
          'invalid_argument',
          `createInPageChannel: agent.call: options.id ${shown(id)} is in use by a request waiting for its result`,
        ));
      }
      const message = { protocol: 1, type: 'call', clientId: latest.clientId, id, tool, input: input === undefined ? {} : input };
      if (rev !== undefined) message.rev = rev;
      let copy;
      try {
        copy = callCopy(message, message.input);
      } catch (error) {
        return Promise.reject(error);
      }
      return request('call', id, copy, timeoutMs);
    },
    /** A `describe` with a fresh id, resolved with its result. */
    describe(tool, options) {
      const notObject = notOptions('describe', options);
      if (notObject !== undefined) return Promise.reject(notObject);
      const id = wasm.newId();
      const bad = misshapen('describe', tool, id);
      if (bad !== undefined) return Promise.reject(bad);
      return request('describe', id, { ...agentMessage('describe', id), tool }, options?.timeoutMs);
    },
    /**
     * Sends a `cancel` for that call id (never answered). A call still
     * waiting for the first manifest is not sent at all and resolves
     * `cancelled signal`, as the page answers a call cancelled before it ran.
     */
    cancel(id) {
      if (!unqueue(id)) {
        toPageLater(agentMessage('cancel', id));
        return;
      }
      const entry = waiting.get(id);
      if (entry === undefined) return;
      waiting.delete(id);
      clearTimeout(entry.timer);
      entry.resolve({ status: 'cancelled', by: 'signal' });
    },
    onConfirmed: (callback) => subscribe(confirmed, callback),
  };

  return { transport, agent };
}
