// npm run soak -- [--minutes N] [--seed S] [--rate R] [--pkg DIR]
//
// Randomized traffic, for N minutes of real time (default 60), through the
// package as an app imports it: pages (createToolmark + bridge) on two
// channels, the in-page channel (its `agent` end) and websocketTransport
// against a `ws` server in this process that plays the agent. R agent
// messages per second per channel (default 50: a chatty agent loop makes
// about one call a second, so this is fifty of them; the hour is about
// 180,000 messages a channel), in the mix below. The seed (printed) replays
// the same sequence of choices; their interleaving with real time can
// differ from run to run.
//
// Real time, not the registry's `now` option: the core's next deadline is a
// real `setTimeout` of (deadline − now()) ms (src/wasm/driver.rs), so a
// simulated clock would only move when expiries are decided, not make them
// come sooner. Confirmations expire after 150 ms instead (confirmExpiryMs).
//
// The traffic, per channel, drawn from a seeded PRNG:
// - calls to tools on scopes a, b and c (sync echo, async wait, throwing,
//   big results up to 256 KB, input failing its schema), bursts of 40 on
//   one scope (rule 5: refused busy past 32 pending), a tool that ignores
//   its abort signal (hang.stuck: cancelled after the 3 s grace), a
//   consequential tool (shop.pay), a tool the page registers and
//   unregisters every few seconds (tmp.toggle: ok, stale or unknown_tool),
//   describes, unknown tools, long ids, a wrong protocol with an id (rule 4:
//   answered "unsupported protocol"), calls through agent.call with
//   timeoutMs (in-page);
// - duplicates (rule 2): an id still in flight sent again, or one of the
//   page's last 500 answered ids (also after a re-attach: the memory is the
//   page's);
// - cancels of queued and running calls, of answered and unknown ids, and
//   with another clientId (which must not cancel anything);
// - reloads: the bridge detached and a new one attached on the same
//   registry (same clientId), or a fresh registry (a new page load, new
//   clientId); on the WebSocket also the server dropping the socket (the
//   transport reconnects after 500 ms);
// - the page's human approves (after 0–250 ms), rejects, or lets the
//   confirmation expire; sometimes decides twice, or approves too late;
// - hostile messages: other and old clientIds, wrong protocols without an
//   id or with another clientId, unknown types, wrong direction, missing or
//   extra fields, non-string ids, non-objects, nesting past 64, over 1 MiB,
//   calls after detach; in-page: throwing getters, cycles, BigInt; on the
//   WebSocket: invalid JSON, binary and empty frames, a frame over 4 Mi
//   UTF-16 units, duplicate keys (the last one counts, as in JSON.parse).
//
// What counts: an *addressed* call (or describe) is a new id sent to an
// attached bridge, after its manifest, with its page's clientId, that the
// spec says is answered (valid, or a wrong protocol with a string id).
// Duplicates, cancels and hostile messages are not addressed; hostile ones
// carry ids starting `h.` and must never be answered. An addressed call
// still unanswered when its bridge is detached or its socket dropped is
// *interrupted*: the spec lets it go unanswered (the server's deadline
// maps it to timeout).
//
// Checks, continuously and at the end (after the traffic stops and every
// call and confirmation settled):
// - every addressed call answered exactly once (within 60 s; interrupted
//   ones at most once), with a result that fits the call (the data of that
//   call, or busy, or cancelled after a cancel), by the page it was sent to;
// - no id answered twice, nothing hostile or unknown answered, every
//   page → agent message valid (validateMessage 'toAgent');
// - every confirmation of a page still attached settled exactly once by
//   one `confirmed`, after its needs_confirmation, with what the human's
//   confirmPending got (approved: ok; rejected: cancelled operator; late or
//   none: confirmation_expired); a second decision gets confirmation_expired;
// - a scope runs one tool at a time (rule 5), a consequential tool runs only
//   as caller human, a run gets its own call's input;
// - page error events only of the expected codes;
// - memory bounded: WebAssembly memory and the JS heap after GC at the end
//   within 10% of their values after the warm-up (WebAssembly memory, which
//   grows in steps of 0.5–1 MiB, may also grow by one MiB; the warm-up is a
//   sixth of the run, 20 s to 10 min, at most half of it; both taken with
//   the traffic paused and drained). Old pages
//   must be collected: the script keeps a detached bridge's state 5 s (60 s
//   for calls a dropped socket interrupted), collects every 5 s, and counts
//   the registries the collector took ("pages gone").
// Exits 1 with the list of violations, else 0.
//
// Development options: --fault NAME, to see the checks fail, one of
// double-answer (the agent tallies one result twice), drop-answer (it misses
// one), double-confirmed (one `confirmed` twice), leak (the page's tools
// keep every big result); --reloads same|fresh|none, only one kind of
// reload or none (default both); --channels in-page|ws, one channel alone
// (default both); --heap-snapshots DIR, a heap snapshot (after GC) at the
// end of the warm-up and at the end, to compare; --heap-samples, the JS heap
// after GC each minute (the least of that minute's collections).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { WebSocket, WebSocketServer } from 'ws';

if (typeof globalThis.gc !== 'function') {
  const run = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}

// ----- options -------------------------------------------------------------

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? fallback : args[at + 1];
}
const MINUTES = Number(option('minutes', 60));
const SEED = Number(option('seed', randomBytes(4).readUInt32LE(0))) >>> 0;
const RATE = Number(option('rate', 50));
const PKG = option('pkg', 'pkg');
const FAULT = option('fault', '');
const RELOADS = option('reloads', 'both'); // development: 'same', 'fresh', 'none'
const CHANNELS = option('channels', 'both'); // development: 'in-page', 'ws'
const HEAP_SNAPSHOTS = option('heap-snapshots', ''); // development: a directory
const HEAP_SAMPLES = args.includes('--heap-samples'); // development
if (!(MINUTES > 0) || !(RATE > 0) || !['', 'double-answer', 'drop-answer', 'double-confirmed', 'leak'].includes(FAULT) || !['both', 'same', 'fresh', 'none'].includes(RELOADS) || !['both', 'in-page', 'ws'].includes(CHANNELS)) {
  console.error('usage: node benches/soak.mjs [--minutes N] [--seed S] [--rate R] [--pkg DIR]');
  process.exit(2);
}

const base = pathToFileURL(resolve(PKG) + '/').href;
const { createToolmark } = await import(`${base}index.js`);
const { bridge } = await import(`${base}bridge/index.js`);
const { createInPageChannel } = await import(`${base}bridge/in-page.js`);
const { websocketTransport } = await import(`${base}bridge/websocket.js`);
const { validateMessage } = await import(`${base}protocol/index.js`);

const DURATION_MS = MINUTES * 60_000;
const WARMUP_MS = Math.min(600_000, Math.max(20_000, DURATION_MS / 6), DURATION_MS / 2);
const CONFIRM_EXPIRY_MS = 150;
const ANSWER_DEADLINE_MS = 60_000;
const RETIRE_MS = 60_000;
/** How long a detached bridge's messages are waited for (they are in flight already, if any). */
const DETACHED_MS = 5_000;
/** A collection every 5 s: V8 does not count the module's memory, so an old page freed by the app would otherwise wait for the collection the JS heap asks for, its wasm memory with it. */
const GC_EVERY_MS = 5_000;
const MEMORY_BOUND = 0.10;
/** WebAssembly memory grows in steps of 0.5–1 MiB here: one step is allowed whatever its share. */
const WASM_STEP = 1048576;
const RECENT_ANSWERED = 500;
const BURST = 40;
/** Mean times between a channel's page reloads and between its socket drops (exponentially distributed). */
const RELOAD_MEAN_MS = 20_000;
const DROP_MEAN_MS = 60_000;

// ----- seeded randomness ---------------------------------------------------

/** sfc32: a small PRNG with a 128-bit state, from one 32-bit seed. */
function prng(seed) {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    between: (lo, hi) => lo + next() * (hi - lo),
    hex: (n) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
    weighted(table) {
      let total = 0;
      for (const [w] of table) total += w;
      let x = next() * total;
      for (const [w, v] of table) if ((x -= w) < 0) return v;
      return table[table.length - 1][1];
    },
  };
  return r;
}
const traffic = prng(SEED);
const human = prng(SEED ^ 0x5bd1e995);
const uuid = (r) => `${r.hex(8)}-${r.hex(4)}-4${r.hex(3)}-${r.pick(['8', '9', 'a', 'b'])}${r.hex(3)}-${r.hex(12)}`;

// ----- the tally -------------------------------------------------------------

const started = performance.now();
const elapsed = () => performance.now() - started;
const T = {
  addressed: 0, byKind: {}, duplicates: 0, cancels: 0, hostile: 0, hostileByKind: {},
  answered: 0, outcomes: {}, interrupted: 0, interruptedAnswered: 0, lost: 0,
  confirmations: 0, confirmedBy: {}, decisions: { approve: 0, reject: 0, ignore: 0, late: 0, twice: 0 },
  confirmationsLost: 0, reloads: { same: 0, fresh: 0 }, drops: 0, pageMessages: 0, errorEvents: {},
  apiCalls: 0, apiTimeouts: 0, apiClosed: 0, pagesCollected: 0,
};
const violations = [];
function violation(what, detail = {}) {
  violations.push({ at: +(elapsed() / 1000).toFixed(1), what, detail });
  if (violations.length <= 30) {
    console.log(`VIOLATION at ${(elapsed() / 1000).toFixed(1)} s: ${what} ${JSON.stringify(detail).slice(0, 400)}`);
  }
}
const bump = (map, key, n = 1) => (map[key] = (map[key] ?? 0) + n);

/** One bit per call sequence number: answered or not (never forgotten). */
const bits = {
  bytes: new Uint8Array(Math.ceil((RATE * 2 * (DURATION_MS / 1000) * 1.5 + 200_000) / 8)),
  get(i) { return i >> 3 < this.bytes.length && (this.bytes[i >> 3] & (1 << (i & 7))) !== 0; },
  set(i) {
    if (i >> 3 >= this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[i >> 3] |= 1 << (i & 7);
  },
};
let nextSeq = 0;
let hostileSeq = 0;
/** Addressed calls not answered yet (and interrupted ones until retired), by id. */
const outstanding = new Map();
/** Confirmations by confirmId, until settled and retired. */
const confirmations = new Map();
const seqOf = (id) => {
  if (typeof id !== 'string') return undefined;
  const [kind, seq] = id.split('.', 2);
  if (kind === 'h') return 'hostile';
  const n = kind === 'c' ? parseInt(seq, 36) : NaN;
  return Number.isInteger(n) ? n : undefined;
};

// ----- pages ---------------------------------------------------------------

const SCOPES = ['a', 'b', 'c'];
const echoSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
const sleepFor = (ms, signal) => new Promise((done, fail) => {
  const timer = setTimeout(done, ms);
  signal?.addEventListener('abort', () => {
    clearTimeout(timer);
    fail(signal.reason);
  }, { once: true });
});
const kept = []; // --fault leak

/**
 * A page load: a registry with its tools and its confirmation UI. What the
 * registry holds (tools, listeners) refers to `state`, never to the
 * registry or the page: the registry keeps JS functions from the module's
 * externref table, which the JS collector treats as roots, so a cycle
 * through it would keep every old page alive. The functions are made in
 * functions of their own for that reason (V8 shares one context among the
 * closures of a function, so one closure over `page` would hold it for all).
 */
let pageCount = 0;
/** Pages whose registry the JS collector has taken. */
const collected = new FinalizationRegistry(() => T.pagesCollected++);
function createPage(channel) {
  const state = { no: ++pageCount, running: {} };
  const tm = createToolmark({ confirmExpiryMs: CONFIRM_EXPIRY_MS });
  registerTools(tm, state);
  collected.register(tm, state.no);
  const page = { no: state.no, channel, tm, state, clientId: undefined, live: true, answerCount: 0, recent: [], drops: 0, unregisterToggle: undefined, nextToggleAt: 0 };
  livePages.set(page.no, page);
  page.offPending = watchPending(tm, page.no);
  return page;
}

/** Live pages by number: the confirmation UI finds its page here. */
const livePages = new Map();
const watchPending = (tm, no) => tm.subscribePending(() => decide(livePages.get(no)));

function registerTools(tm, state) {
  tm.events.on('error', (e) => {
    bump(T.errorEvents, e.code);
    if (!['invalid_message', 'tool_threw', 'late_result'].includes(e.code)) violation('unexpected page error event', { page: state.no, ...e });
  });
  // Rule 5: one run at a time per scope; and each run gets its call's input.
  const serial = (scope, run) => async (input, ctx) => {
    if (seqOf(ctx.callId) !== input.n) violation('a run got another call\'s input', { callId: ctx.callId, input });
    if (state.running[scope]) violation('two runs at once on one scope', { scope, callId: ctx.callId });
    state.running[scope] = (state.running[scope] ?? 0) + 1;
    let done = false;
    const finish = () => {
      if (!done) state.running[scope]--;
      done = true;
    };
    ctx.signal.addEventListener('abort', finish, { once: true });
    try {
      return await run(input, ctx);
    } finally {
      finish();
    }
  };
  for (const s of SCOPES) {
    const scope = tm.scope(s);
    scope.register({ name: 'echo', description: 'Echoes n', inputSchema: echoSchema, hints: { readOnly: true }, run: serial(s, (i) => ({ n: i.n })) });
    scope.register({ name: 'wait', description: 'Waits ms, then echoes n', inputSchema: echoSchema, run: serial(s, async (i, ctx) => {
      await sleepFor(i.ms, ctx.signal);
      return { n: i.n };
    }) });
    scope.register({ name: 'boom', description: 'Throws', inputSchema: echoSchema, run: serial(s, () => {
      throw new Error('boom');
    }) });
    scope.register({ name: 'big', description: 'Returns size characters', inputSchema: echoSchema, run: serial(s, (i) => {
      const data = { n: i.n, blob: 'x'.repeat(i.size) };
      if (FAULT === 'leak') kept.push(data);
      return data;
    }) });
  }
  tm.scope('shop').register({
    name: 'pay', description: 'Pays', hints: { consequential: true }, inputSchema: echoSchema,
    summary: (i) => `Pay ${i.amount}`,
    run: serial('shop', (i, ctx) => {
      if (ctx.caller !== 'human') violation('a consequential tool ran for the agent', { callId: ctx.callId, caller: ctx.caller });
      return { n: i.n, paid: i.amount };
    }),
  });
  // Ignores its signal: aborted runs are answered after the grace period.
  tm.scope('hang').register({ name: 'stuck', description: 'Takes 4 s whatever happens', inputSchema: echoSchema, run: async (i) => {
    await sleepFor(4000);
    return { n: i.n };
  } });
}

function toggle(page) {
  if (page.unregisterToggle) {
    page.unregisterToggle();
    page.unregisterToggle = undefined;
  } else {
    page.unregisterToggle = page.tm.register({ name: 'tmp.toggle', description: 'Comes and goes', inputSchema: echoSchema, run: (i) => ({ n: i.n }) });
  }
}

// ----- the human ---------------------------------------------------------

function confirmation(confirmId, page) {
  let entry = confirmations.get(confirmId);
  if (!entry) {
    entry = { confirmId, page, createdAt: elapsed(), drops: page.drops, result: undefined, decided: false, decision: undefined, human: [], confirmed: undefined, confirmedCount: 0, settledAt: undefined };
    confirmations.set(confirmId, entry);
    T.confirmations++;
  }
  return entry;
}

/** The page's confirmation UI: every new pending confirmation gets a decision. */
function decide(page) {
  if (!page?.live) return;
  for (const pending of page.tm.pendingConfirmations()) {
    const entry = confirmation(pending.confirmId, page);
    if (entry.decided) continue;
    entry.decided = true;
    const decision = human.weighted([[4, 'approve'], [3, 'reject'], [2, 'ignore'], [1, 'late']]);
    entry.decision = decision;
    T.decisions[decision]++;
    if (decision === 'ignore') continue;
    const delay = decision === 'late' ? CONFIRM_EXPIRY_MS + 100 : human.between(0, 250);
    const twice = human.chance(0.1);
    if (twice) T.decisions.twice++;
    setTimeout(async () => {
      if (!page.live) return;
      const approve = decision !== 'reject';
      const first = await page.tm.confirmPending(pending.confirmId, approve);
      humanResult(entry, first, approve);
      if (twice) {
        const second = await page.tm.confirmPending(pending.confirmId, approve);
        if (first.status === 'refused' && first.code === 'busy') return;
        if (!(second.status === 'refused' && second.code === 'confirmation_expired')) {
          violation('a second decision was not refused confirmation_expired', { confirmId: entry.confirmId, first, second });
        }
      }
    }, delay);
  }
}

function humanResult(entry, result, approve) {
  const fits = approve
    ? (result.status === 'ok' && typeof result.data?.paid === 'number') || (result.status === 'refused' && ['confirmation_expired', 'busy'].includes(result.code))
    : (result.status === 'cancelled' && result.by === 'operator') || (result.status === 'refused' && result.code === 'confirmation_expired');
  if (!fits) violation('confirmPending gave an unexpected result', { confirmId: entry.confirmId, approve, result });
  if (result.status === 'refused' && result.code === 'busy') return; // still pending
  entry.human.push(result);
  compareConfirmed(entry);
}

function compareConfirmed(entry) {
  const [first] = entry.human;
  if (!first || !entry.confirmed) return;
  if (JSON.stringify(first) !== JSON.stringify(entry.confirmed)) {
    violation('`confirmed` differs from what confirmPending gave', { confirmId: entry.confirmId, human: first, confirmed: entry.confirmed });
  }
}

// ----- channels and epochs (one bridge's life) ----------------------------

const wsEpochs = new Map();
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((done) => server.once('listening', done));
const wsUrl = `ws://127.0.0.1:${server.address().port}`;
server.on('connection', (socket, request) => {
  const epoch = wsEpochs.get(Number(new URL(request.url, wsUrl).searchParams.get('epoch')));
  if (!epoch) {
    violation('a detached bridge\'s transport connected', { url: request.url });
    socket.close();
    return;
  }
  epoch.socket = socket;
  socket.on('message', (data, isBinary) => {
    let message;
    try {
      message = isBinary ? undefined : JSON.parse(data.toString());
    } catch {}
    if (message === undefined) return violation('the page sent a frame that is not JSON text', { epoch: epoch.no });
    fromPage(epoch, message);
  });
  socket.on('close', () => {
    if (epoch.socket === socket) epoch.socket = undefined;
  });
});

const channels = [
  { name: 'in-page', current: undefined, budget: 0, nextReloadAt: 0, nextDropAt: Infinity, oldClientIds: [] },
  { name: 'ws', current: undefined, budget: 0, nextReloadAt: 0, nextDropAt: 0, oldClientIds: [] },
].filter((channel) => CHANNELS === 'both' || channel.name === CHANNELS);
let epochCount = 0;
const retiring = []; // epochs detached, their listeners removed after DETACHED_MS

function attach(channel, page) {
  const epoch = { no: ++epochCount, channel, page, live: true, sawManifest: false, rev: 0, tools: [], outstanding: new Set(), socket: undefined };
  if (channel.name === 'in-page') {
    const { transport, agent } = createInPageChannel();
    epoch.agent = agent;
    epoch.off = agent.onMessage((m) => fromPage(epoch, m));
    epoch.post = (value) => agent.send(value);
    epoch.detach = page.tm.use(bridge({ transport }));
  } else {
    wsEpochs.set(epoch.no, epoch);
    epoch.post = (value) => epoch.socket?.send(typeof value === 'string' || value instanceof Uint8Array ? value : JSON.stringify(value));
    epoch.detach = page.tm.use(bridge({ transport: websocketTransport({ url: `${wsUrl}/?epoch=${epoch.no}`, WebSocket }) }));
  }
  channel.current = epoch;
  return epoch;
}

const ready = (epoch) => epoch?.live && epoch.sawManifest && (epoch.channel.name === 'in-page' || epoch.socket?.readyState === WebSocket.OPEN);

/** Its addressed calls still unanswered may now go unanswered; an answer is waited for `keepMs`. */
function interrupt(epoch, keepMs) {
  for (const id of epoch.outstanding) {
    const record = outstanding.get(id);
    if (record && !record.interrupted) {
      record.interrupted = true;
      record.retireAt = elapsed() + keepMs;
      T.interrupted++;
    }
  }
}

function reload(channel, fresh) {
  const old = channel.current;
  interrupt(old, DETACHED_MS);
  old.live = false;
  old.detach();
  wsEpochs.delete(old.no);
  retiring.push({ epoch: old, at: elapsed() });
  let page = old.page;
  if (fresh) {
    page.live = false;
    livePages.delete(page.no);
    page.offPending();
    // Its entries keep what the checks read, not the page (which can go now).
    const gone = { no: page.no, live: false, drops: page.drops, goneAt: elapsed() };
    for (const entry of confirmations.values()) {
      if (entry.page !== page) continue;
      entry.page = gone;
      if (!entry.confirmed) entry.lost = true;
    }
    channel.oldClientIds.push(page.clientId);
    if (channel.oldClientIds.length > 5) channel.oldClientIds.shift();
    page = createPage(channel);
  }
  T.reloads[fresh ? 'fresh' : 'same']++;
  attach(channel, page);
  // Calls after detach, to the old end: never answered.
  for (let i = traffic.int(3); i > 0; i--) {
    const message = { protocol: 1, type: 'call', clientId: old.page.clientId, id: hostileId(), tool: 'a.echo', input: { n: 0 } };
    if (old.agent) old.agent.send(message);
    else if (old.socket?.readyState === WebSocket.OPEN) old.socket.send(JSON.stringify(message));
    else continue;
    T.hostile++;
    bump(T.hostileByKind, 'call after detach');
  }
}

function drop(channel) {
  const epoch = channel.current;
  if (!epoch.socket) return;
  // Answers the page buffered while disconnected come after the reconnect.
  interrupt(epoch, RETIRE_MS);
  epoch.page.drops++;
  epoch.socket.terminate();
  epoch.socket = undefined;
  T.drops++;
}

// ----- page → agent ------------------------------------------------------

let faultDone = false;
function fromPage(epoch, message) {
  T.pageMessages++;
  const verdict = validateMessage(message, 'toAgent');
  if (!verdict.ok) return violation('the page sent an invalid message', { message, errors: verdict.errors });
  const { page } = epoch;
  if (page.clientId === undefined && message.type === 'manifest') page.clientId = message.clientId;
  if (message.clientId !== page.clientId) return violation('a message with another clientId than its page\'s', { expected: page.clientId, message });
  switch (message.type) {
    case 'manifest':
      epoch.sawManifest = true;
      epoch.rev = message.rev;
      epoch.tools = message.tools.map((t) => t.name);
      break;
    case 'result':
      onResult(epoch, message);
      if (FAULT === 'double-answer' && !faultDone && T.answered > 1000) {
        faultDone = true;
        onResult(epoch, message);
      }
      break;
    case 'confirmed':
      onConfirmed(epoch, message);
      if (FAULT === 'double-confirmed' && !faultDone && T.confirmations > 100) {
        faultDone = true;
        onConfirmed(epoch, message);
      }
      break;
    default:
      violation('unexpected message type', { message });
  }
}

const outcomeOf = (r) => ({ refused: `refused ${r.code}`, cancelled: `cancelled ${r.by}`, error: `error ${r.message}` })[r.status] ?? r.status;

/** Why `result` does not fit the call, or undefined. */
function misfit(record, result) {
  const { kind } = record;
  if (result.status === 'refused' && result.code === 'busy' && record.lane) return undefined;
  if (record.cancelled && result.status === 'cancelled' && result.by === 'signal') return undefined;
  const okN = result.status === 'ok' && result.data?.n === record.n;
  const refusedWithRev = (code) => result.status === 'refused' && result.code === code && Number.isInteger(result.rev);
  switch (kind) {
    case 'echo': case 'wait': case 'stuck': case 'long id': case 'api call': case 'burst': case 'getter': case 'duplicate keys':
      return okN ? undefined : 'not ok with its n';
    case 'invalid': return result.status === 'invalid' && result.issues.length > 0 ? undefined : 'not invalid';
    case 'boom': return result.status === 'error' && result.message === 'Tool failed' ? undefined : 'not error Tool failed';
    case 'big': return okN && result.data.blob.length === record.size ? undefined : 'not ok with its blob';
    case 'pay': return result.status === 'needs_confirmation' && result.summary === `Pay ${record.amount}` ? undefined : 'not needs_confirmation with its summary';
    case 'toggle': return okN || refusedWithRev('stale') || refusedWithRev('unknown_tool') ? undefined : 'not ok, stale or unknown_tool';
    case 'unknown tool': case 'describe unknown': return refusedWithRev('unknown_tool') ? undefined : 'not refused unknown_tool';
    case 'describe': return result.status === 'ok' && result.data?.name === record.tool && result.data.inputSchema ? undefined : 'not its manifest entry';
    case 'wrong protocol': return result.status === 'error' && result.message === 'unsupported protocol' ? undefined : 'not error unsupported protocol';
    default: return `unknown kind ${kind}`;
  }
}

function onResult(epoch, message) {
  if (FAULT === 'drop-answer' && !faultDone && T.answered > 1000) {
    faultDone = true;
    return;
  }
  const { id, result } = message;
  const seq = seqOf(id);
  if (seq === 'hostile') return violation('a hostile message was answered', { id, result });
  if (seq === undefined || seq >= nextSeq) return violation('an answer for an id never sent', { id });
  if (bits.get(seq)) return violation('an id answered twice', { id: id.slice(0, 80), result });
  bits.set(seq);
  const record = outstanding.get(id);
  if (!record) return violation('an answer after its call was given up (over 60 s)', { id: id.slice(0, 80) });
  outstanding.delete(id);
  record.epoch.outstanding.delete(id);
  record.result = result;
  T.answered++;
  if (record.interrupted) T.interruptedAnswered++;
  bump(T.outcomes, outcomeOf(result));
  if (record.epoch.page !== epoch.page) violation('answered by another page', { id, sentTo: record.epoch.page.no, answeredBy: epoch.page.no });
  const why = misfit(record, result);
  if (why) violation(`a result that does not fit its call: ${why}`, { kind: record.kind, id: id.slice(0, 80), result: JSON.stringify(result).slice(0, 200) });
  const { page } = epoch;
  page.answerCount++;
  page.recent.push({ message: record.message, at: page.answerCount });
  if (page.recent.length > RECENT_ANSWERED) page.recent.shift();
  if (result.status === 'needs_confirmation') {
    const entry = confirmation(result.confirmId, page);
    if (entry.result) violation('a confirmId carried by two results', { confirmId: result.confirmId });
    entry.result = result;
  }
}

function onConfirmed(epoch, message) {
  const entry = confirmation(message.confirmId, epoch.page);
  entry.confirmedCount++;
  if (entry.confirmedCount > 1) return violation('a confirmation confirmed twice', { confirmId: message.confirmId, results: [entry.confirmed, message.result] });
  entry.confirmed = message.result;
  entry.settledAt = elapsed();
  const r = message.result;
  bump(T.confirmedBy, outcomeOf(r));
  const fits = (r.status === 'ok' && typeof r.data?.paid === 'number' && entry.decision === 'approve')
    || (r.status === 'cancelled' && r.by === 'operator' && entry.decision === 'reject')
    || (r.status === 'refused' && r.code === 'confirmation_expired');
  if (!fits) violation('a `confirmed` that does not fit the decision', { confirmId: message.confirmId, decision: entry.decision, result: r });
  compareConfirmed(entry);
}

// ----- agent → page ------------------------------------------------------

const hostileId = () => `h.${(hostileSeq++).toString(36)}.${traffic.hex(16)}`;
const toolsOn = (epoch, names) => names.filter((n) => epoch.tools.includes(n));

function addressed(epoch, kind, message, extra = {}) {
  const record = { id: message.id, kind, epoch, message, sentAt: elapsed(), cancelled: false, interrupted: false, lane: message.type === 'call', ...extra };
  outstanding.set(message.id, record);
  epoch.outstanding.add(message.id);
  T.addressed++;
  bump(T.byKind, kind);
  return record;
}

function newId(long = false) {
  const seq = nextSeq++;
  return { seq, id: `c.${seq.toString(36)}.${traffic.hex(24)}${long ? `.${'x'.repeat(traffic.int(4000) + 100)}` : ''}` };
}

function call(epoch, kind, tool, input = {}, extra = {}) {
  const { seq, id } = newId(kind === 'long id');
  const message = { protocol: 1, type: 'call', clientId: epoch.page.clientId, id, tool, input: { n: seq, ...input } };
  if (extra.rev !== undefined) message.rev = extra.rev;
  addressed(epoch, kind, message, { n: seq, ...input, tool });
  epoch.post(message);
  return id;
}

function hostile(epoch, kind, value) {
  T.hostile++;
  bump(T.hostileByKind, kind);
  epoch.post(value);
}

const scope = () => traffic.weighted([[3, 'a'], [2, 'b'], [1, 'c']]);
const nested = (depth) => {
  let value = { leaf: true };
  for (let i = 0; i < depth; i++) value = { v: [value] };
  return value;
};

function act(channel) {
  const epoch = channel.current;
  const { clientId } = epoch.page;
  const inPage = channel.name === 'in-page';
  const action = traffic.weighted([
    [25, 'echo'], [3, 'invalid'], [15, 'wait'], [4, 'boom'], [3, 'big'], [6, 'pay'], [0.5, 'stuck'],
    [3, 'toggle'], [1, 'unknown tool'], [4, 'describe'], [1, 'describe unknown'], [1, 'wrong protocol'],
    [1, 'long id'], [inPage ? 2 : 0, 'api call'], [inPage ? 0.5 : 0, 'getter'], [inPage ? 0 : 0.5, 'duplicate keys'],
    [4, 'duplicate in flight'], [3, 'duplicate answered'], [5, 'cancel'], [1, 'cancel other'], [1, 'cancel foreign'],
    [6, 'hostile'], [0.3, 'burst'],
  ]);
  switch (action) {
    case 'echo': return call(epoch, 'echo', `${scope()}.echo`);
    case 'invalid': {
      const { seq, id } = newId();
      const message = { protocol: 1, type: 'call', clientId, id, tool: `${scope()}.echo`, input: { n: `${seq}` } };
      addressed(epoch, 'invalid', message, { n: seq });
      return epoch.post(message);
    }
    case 'wait': return call(epoch, 'wait', `${scope()}.wait`, { ms: traffic.int(200) });
    case 'boom': return call(epoch, 'boom', `${scope()}.boom`);
    case 'big': return call(epoch, 'big', `${scope()}.big`, { size: traffic.pick([1000, 10_000, 100_000, 256_000]) });
    case 'pay': return call(epoch, 'pay', 'shop.pay', { amount: traffic.int(1000) });
    case 'stuck': {
      const id = call(epoch, 'stuck', 'hang.stuck');
      if (traffic.chance(0.7)) setTimeout(() => cancel(epoch, id), traffic.int(1000));
      return;
    }
    case 'toggle': {
      const rev = traffic.chance(0.5) ? Math.max(0, epoch.rev - traffic.int(3)) : undefined;
      return call(epoch, 'toggle', 'tmp.toggle', {}, { rev });
    }
    case 'unknown tool': return call(epoch, 'unknown tool', `nope.${traffic.hex(4)}`);
    case 'describe': case 'describe unknown': {
      const tool = action === 'describe' ? traffic.pick(toolsOn(epoch, SCOPES.flatMap((s) => [`${s}.echo`, `${s}.wait`]).concat('shop.pay'))) : `nope.${traffic.hex(4)}`;
      if (!tool) return;
      const { id } = newId();
      const message = { protocol: 1, type: 'describe', clientId, id, tool };
      addressed(epoch, action, message, { tool, lane: false });
      return epoch.post(message);
    }
    case 'wrong protocol': {
      const { id } = newId();
      const message = { protocol: traffic.pick([2, 0, '1', 1.5, null]), type: traffic.pick(['call', 'describe', 'hello']), clientId, id, tool: 'a.echo', input: {} };
      addressed(epoch, 'wrong protocol', message, { lane: false });
      return epoch.post(message);
    }
    case 'long id': return call(epoch, 'long id', `${scope()}.echo`);
    // JSON.parse keeps the last of duplicate keys, and so must the page: the
    // answer carries the second id, never the first (hostile) one.
    case 'duplicate keys': {
      const { seq, id } = newId();
      const message = { protocol: 1, type: 'call', clientId, id, tool: 'a.echo', input: { n: seq } };
      addressed(epoch, 'duplicate keys', message, { n: seq });
      return epoch.post(`{"id":"${hostileId()}",${JSON.stringify(message).slice(1)}`);
    }
    case 'api call': {
      const { seq, id } = newId();
      const timeoutMs = traffic.chance(0.3) ? 30 : 5_000;
      const tool = `${scope()}.wait`;
      const input = { n: seq, ms: traffic.int(100) };
      const record = addressed(epoch, 'api call', { protocol: 1, type: 'call', clientId, id, tool, input }, { n: seq, cancelled: timeoutMs < 100 });
      T.apiCalls++;
      epoch.agent.call(tool, input, { id, timeoutMs }).then(
        (result) => {
          if (JSON.stringify(result) !== JSON.stringify(record.result)) violation('agent.call resolved with another result than the page sent', { id, result, sent: record.result });
        },
        (error) => {
          if (error.code === 'timeout') T.apiTimeouts++;
          // A reload detaches the bridge, which closes the channel under the calls still waiting.
          else if (error.code === 'transport_closed' && record.interrupted) T.apiClosed++;
          else violation('agent.call rejected', { id, error: String(error) });
        },
      );
      return;
    }
    case 'getter': {
      const { seq, id } = newId();
      const plain = { protocol: 1, type: 'call', clientId, id, tool: 'a.echo', input: { n: seq } };
      addressed(epoch, 'getter', plain, { n: seq });
      return epoch.post({ protocol: 1, type: 'call', clientId, get id() { return id; }, tool: 'a.echo', input: { n: seq } });
    }
    case 'duplicate in flight': {
      const ids = [...epoch.outstanding].filter((id) => !outstanding.get(id).interrupted);
      if (!ids.length) return;
      T.duplicates++;
      return epoch.post(outstanding.get(traffic.pick(ids)).message);
    }
    case 'duplicate answered': {
      const { page } = epoch;
      const recent = page.recent.filter((r) => page.answerCount - r.at < RECENT_ANSWERED);
      if (!recent.length) return;
      T.duplicates++;
      return epoch.post(traffic.pick(recent).message);
    }
    case 'cancel': {
      const ids = [...epoch.outstanding].filter((id) => outstanding.get(id).lane && !outstanding.get(id).interrupted);
      if (ids.length) cancel(epoch, traffic.pick(ids));
      return;
    }
    case 'cancel other': {
      const recent = epoch.page.recent;
      const id = recent.length && traffic.chance(0.5) ? traffic.pick(recent).message.id : hostileId();
      T.cancels++;
      return epoch.post({ protocol: 1, type: 'cancel', clientId, id });
    }
    case 'cancel foreign': {
      const ids = [...epoch.outstanding];
      if (!ids.length) return;
      return hostile(epoch, 'cancel with another clientId', { protocol: 1, type: 'cancel', clientId: uuid(traffic), id: traffic.pick(ids) });
    }
    case 'hostile': return hostileMessage(epoch);
    case 'burst': {
      const s = scope();
      for (let i = 0; i < BURST; i++) call(epoch, 'burst', `${s}.wait`, { ms: 20 + traffic.int(60) });
      return;
    }
  }
}

function cancel(epoch, id) {
  const record = outstanding.get(id);
  if (!epoch.live || !record || record.interrupted || !ready(epoch)) return;
  record.cancelled = true;
  T.cancels++;
  epoch.post({ protocol: 1, type: 'cancel', clientId: epoch.page.clientId, id });
}

function hostileMessage(epoch, forced) {
  const { clientId } = epoch.page;
  const inPage = epoch.channel.name === 'in-page';
  const call = (fields = {}) => ({ protocol: 1, type: 'call', clientId, id: hostileId(), tool: 'a.echo', input: { n: 0 }, ...fields });
  const kind = forced ?? traffic.weighted([
    [3, 'another clientId'], [2, 'an old clientId'], [1, 'wrong protocol, another clientId'], [1, 'wrong protocol, no id'],
    [1, 'wrong protocol, empty id'], [2, 'unknown type'], [1, 'wrong direction'], [1, 'no tool'], [1, 'extra property'],
    [1, 'number id'], [1, 'no clientId'], [2, 'not an object'], [1, 'nested 100 deep'], [0.05, 'over 1 MiB'],
    [inPage ? 1 : 0, 'throwing getter'], [inPage ? 1 : 0, 'cycle'], [inPage ? 1 : 0, 'BigInt'],
    [inPage ? 0 : 2, 'invalid JSON'], [inPage ? 0 : 1, 'binary frame'], [inPage ? 0 : 1, 'empty frame'],
    [inPage ? 0 : 0.02, 'frame over 4 Mi units'],
  ]);
  const old = epoch.channel.oldClientIds;
  let value;
  switch (kind) {
    case 'another clientId': value = call({ clientId: uuid(traffic) }); break;
    case 'an old clientId': if (!old.length) return; value = call({ clientId: traffic.pick(old) }); break;
    case 'wrong protocol, another clientId': value = call({ protocol: 2, clientId: uuid(traffic) }); break;
    case 'wrong protocol, no id': value = call({ protocol: 2, id: undefined }); break;
    case 'wrong protocol, empty id': value = call({ protocol: 2, id: '' }); break;
    case 'unknown type': value = call({ type: traffic.pick(['hello', 'manifest', 'CALL', '']) }); break;
    case 'wrong direction': value = { protocol: 1, type: 'result', clientId, id: hostileId(), result: { status: 'ok' } }; break;
    case 'no tool': value = call({ tool: undefined }); break;
    case 'extra property': value = call({ extra: 1 }); break;
    case 'number id': value = call({ id: traffic.int(1e6) }); break;
    case 'no clientId': value = call({ clientId: undefined }); break;
    case 'not an object': value = traffic.pick([null, 7, 'call', [], true, [call()]]); break;
    case 'nested 100 deep': value = call({ input: nested(100) }); break;
    case 'over 1 MiB': value = call({ input: { n: 0, s: 'x'.repeat(1_100_000) } }); break;
    case 'throwing getter': value = { ...call(), get tool() { throw new Error('hostile getter'); } }; break;
    case 'cycle': value = call(); value.input.self = value; break;
    case 'BigInt': value = call({ input: { n: 10n } }); break;
    case 'invalid JSON': value = traffic.pick(['{', '{"protocol":1,', 'nul', '{"a":1}}', '\u0000', '{"protocol":1,"type":"call",}']); break;
    case 'binary frame': value = new Uint8Array([123, 125]); break;
    case 'empty frame': value = ''; break;
    case 'frame over 4 Mi units': value = JSON.stringify(call({ input: { n: 0, s: 'x'.repeat(4 * 1048576) } })); break;
  }
  hostile(epoch, kind, value);
}

// ----- memory --------------------------------------------------------------

const probe = websocketTransport({ url: 'ws://127.0.0.1:9', WebSocket });
probe.close();
const wasmBytes = () => probe.constructor.__stats().memoryBytes;
const mib = (bytes) => `${(bytes / 1048576).toFixed(2)} MiB`;
async function snapshot() {
  for (let i = 0; i < 4; i++) {
    await new Promise((done) => setTimeout(done, 20));
    globalThis.gc();
  }
  return { wasm: wasmBytes(), heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
}
function heapSnapshot(label) {
  if (HEAP_SNAPSHOTS) console.log(`heap snapshot ${writeHeapSnapshot(resolve(HEAP_SNAPSHOTS, `soak-${SEED}-${label}.heapsnapshot`))}`);
}
/** --heap-samples: the least JS heap after the minute's collections. */
let minuteLeast = Infinity;
let minuteNo = 0;

// ----- the run -------------------------------------------------------------

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
let paused = false;

function housekeeping() {
  const now = elapsed();
  for (const [id, record] of outstanding) {
    const age = now - record.sentAt;
    if (record.interrupted && now > record.retireAt) {
      outstanding.delete(id);
      record.epoch.outstanding.delete(id);
      T.lost++;
    } else if (!record.interrupted && age > ANSWER_DEADLINE_MS) {
      violation('an addressed call not answered within 60 s', { kind: record.kind, id: id.slice(0, 80), epochLive: record.epoch.live });
      outstanding.delete(id);
      record.epoch.outstanding.delete(id);
    }
  }
  for (const [confirmId, entry] of confirmations) {
    if (entry.confirmed) {
      if (!entry.result && entry.drops === entry.page.drops && now - entry.settledAt > 5000) {
        violation('a `confirmed` whose needs_confirmation never came', { confirmId });
        entry.result = {};
      }
      if (now - entry.settledAt > RETIRE_MS) confirmations.delete(confirmId);
    } else if (entry.lost || !entry.page.live) {
      if (now - (entry.page.goneAt ?? entry.createdAt) > DETACHED_MS) {
        confirmations.delete(confirmId);
        T.confirmationsLost++;
      }
    } else if (now - entry.createdAt > CONFIRM_EXPIRY_MS + 10_000) {
      // A socket dropped since it was made may have taken its `confirmed` (a
      // re-attach may not: it goes to the new bridge).
      if (entry.drops === entry.page.drops) violation('a confirmation of a live page never settled', { confirmId, decision: entry.decision });
      else T.confirmationsLost++;
      confirmations.delete(confirmId);
    }
  }
  while (retiring.length && now - retiring[0].at > DETACHED_MS) {
    const { epoch } = retiring.shift();
    epoch.off?.();
    epoch.socket?.terminate();
  }
}

function progress(label = '') {
  const m = process.memoryUsage();
  const o = T.outcomes;
  const c = T.confirmedBy;
  console.log(`[${(elapsed() / 1000).toFixed(0).padStart(5)} s${label}] addressed ${T.addressed} answered ${T.answered} open ${outstanding.size}` +
    ` | ok ${o.ok ?? 0} invalid ${o.invalid ?? 0} busy ${o['refused busy'] ?? 0} cancelled ${o['cancelled signal'] ?? 0}` +
    ` error ${(o['error Tool failed'] ?? 0) + (o['error unsupported protocol'] ?? 0)} needs_confirmation ${o.needs_confirmation ?? 0}` +
    ` | confirmed ok ${c.ok ?? 0} operator ${c['cancelled operator'] ?? 0} expired ${c['refused confirmation_expired'] ?? 0}` +
    ` | dup ${T.duplicates} cancel ${T.cancels} hostile ${T.hostile} reloads ${T.reloads.same}+${T.reloads.fresh} drops ${T.drops} pages gone ${T.pagesCollected}` +
    ` | wasm ${mib(wasmBytes())} heap ${mib(m.heapUsed)} rss ${mib(m.rss)}${violations.length ? ` | VIOLATIONS ${violations.length}` : ''}`);
}

/** Waits until every addressed call is answered and every confirmation of a live page settled. */
async function drain(limitMs = 90_000) {
  const end = elapsed() + limitMs;
  while (elapsed() < end) {
    housekeeping();
    const open = [...outstanding.values()].filter((r) => !r.interrupted).length;
    const unsettled = [...confirmations.values()].filter((e) => !e.confirmed && e.page.live && e.drops === e.page.drops).length;
    const pending = channels.reduce((n, ch) => n + ch.current.page.tm.pendingConfirmations().length, 0);
    if (open === 0 && unsettled === 0 && pending === 0) return true;
    await sleep(50);
  }
  return false;
}

/** Heavy things once, so the warm-up's memory includes them. */
function heavy(channel) {
  const epoch = channel.current;
  for (const s of SCOPES) call(epoch, 'big', `${s}.big`, { size: 256_000 });
  hostileMessage(epoch, 'over 1 MiB');
  if (channel.name === 'ws') hostileMessage(epoch, 'frame over 4 Mi units');
  for (let i = 0; i < BURST; i++) call(epoch, 'burst', 'a.wait', { ms: 20 });
}

console.log(`soak: ${MINUTES} min, ${RATE} messages/s per channel (in-page and WebSocket), seed ${SEED}${FAULT ? `, fault ${FAULT}` : ''}`);
console.log(`Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, package ${resolve(PKG)}; warm-up ${(WARMUP_MS / 1000).toFixed(0)} s, replay with --seed ${SEED}`);
for (const channel of channels) attach(channel, createPage(channel));

let before;
let warmedUp = false;
let last = 0;
let lastProgress = 0;
let lastHousekeeping = 0;
let lastGc = 0;
const exp = (mean) => -Math.log(1 - traffic.next()) * mean;
for (const channel of channels) {
  channel.nextReloadAt = exp(RELOAD_MEAN_MS);
  if (channel.name === 'ws') channel.nextDropAt = exp(DROP_MEAN_MS);
}

while (elapsed() < DURATION_MS) {
  await sleep(10);
  const now = elapsed();
  const dt = Math.min(now - last, 200);
  last = now;
  if (!warmedUp && now >= WARMUP_MS) {
    paused = true;
    if (!(await drain())) violation('the traffic did not drain after the warm-up');
    before = await snapshot();
    console.log(`warm-up done: wasm ${mib(before.wasm)}, JS heap ${mib(before.heap)} (after GC, traffic drained)`);
    heapSnapshot('warm');
    warmedUp = true;
    paused = false;
    last = elapsed();
    continue;
  }
  if (paused) continue;
  for (const channel of channels) {
    const epoch = channel.current;
    if (now >= epoch.page.nextToggleAt) {
      toggle(epoch.page);
      epoch.page.nextToggleAt = now + traffic.between(1000, 4000);
    }
    if (now >= channel.nextReloadAt && ready(epoch) && RELOADS !== 'none') {
      reload(channel, RELOADS === 'both' ? traffic.chance(0.5) : RELOADS === 'fresh');
      channel.nextReloadAt = now + exp(RELOAD_MEAN_MS);
      continue;
    }
    if (now >= channel.nextDropAt && ready(epoch)) {
      drop(channel);
      channel.nextDropAt = now + exp(DROP_MEAN_MS);
      continue;
    }
    channel.budget = Math.min(channel.budget + (RATE * dt) / 1000, RATE);
    if (!ready(epoch)) continue;
    if (!channel.heavyDone && now > 2000) {
      channel.heavyDone = true;
      heavy(channel);
    }
    while (channel.budget >= 1) {
      channel.budget--;
      act(channel);
    }
  }
  if (now - lastGc > GC_EVERY_MS) {
    lastGc = now;
    globalThis.gc();
    if (HEAP_SAMPLES) {
      minuteLeast = Math.min(minuteLeast, process.memoryUsage().heapUsed);
      if (now >= (minuteNo + 1) * 60_000) {
        minuteNo = Math.floor(now / 60_000);
        console.log(`[heap] ${minuteNo} min: ${mib(minuteLeast)} (least after GC in the minute)`);
        minuteLeast = Infinity;
      }
    }
  }
  if (now - lastHousekeeping > 1000) {
    lastHousekeeping = now;
    housekeeping();
  }
  if (now - lastProgress > 10_000) {
    lastProgress = now;
    progress();
  }
}

// ----- the end -------------------------------------------------------------

const trafficMs = elapsed();
if (!(await drain())) violation('the traffic did not drain at the end');
await sleep(2000); // late or second answers would come now
housekeeping();
for (const record of outstanding.values()) {
  if (!record.interrupted) violation('an addressed call never answered', { kind: record.kind, id: record.id.slice(0, 80) });
  else T.lost++;
}
for (const entry of confirmations.values()) {
  if (entry.confirmed) continue;
  if (entry.page.live && entry.drops === entry.page.drops) violation('a confirmation of a live page never settled', { confirmId: entry.confirmId });
  else T.confirmationsLost++;
}
progress(' end');
const after = await snapshot();
heapSnapshot('end');
const growth = (k) => (after[k] - before[k]) / before[k];
if (growth('wasm') > MEMORY_BOUND && after.wasm - before.wasm > WASM_STEP) violation(`WebAssembly memory grew more than ${MEMORY_BOUND * 100}% and 1 MiB`, { before: mib(before.wasm), after: mib(after.wasm) });
if (growth('heap') > MEMORY_BOUND) violation(`JS heap grew more than ${MEMORY_BOUND * 100}%`, { before: mib(before.heap), after: mib(after.heap) });

console.log(`\nsoak: ${(trafficMs / 60000).toFixed(1)} min of traffic, ${(elapsed() / 60000).toFixed(1)} min in all, seed ${SEED}`);
console.log(`addressed ${T.addressed} (${Object.entries(T.byKind).map(([k, v]) => `${k} ${v}`).join(', ')})`);
console.log(`answered ${T.answered}: ${Object.entries(T.outcomes).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`interrupted by a reload or drop ${T.interrupted} (answered anyway ${T.interruptedAnswered}, unanswered ${T.lost})`);
console.log(`not addressed: duplicates ${T.duplicates}, cancels ${T.cancels}, hostile ${T.hostile} (${Object.entries(T.hostileByKind).map(([k, v]) => `${k} ${v}`).join(', ')})`);
console.log(`agent.call ${T.apiCalls} (timed out ${T.apiTimeouts}, closed by a reload ${T.apiClosed})`);
console.log(`confirmations ${T.confirmations}: decisions ${Object.entries(T.decisions).map(([k, v]) => `${k} ${v}`).join(', ')}; confirmed ${Object.entries(T.confirmedBy).map(([k, v]) => `${k} ${v}`).join(', ')}; lost with their page ${T.confirmationsLost}`);
console.log(`reloads ${T.reloads.same} re-attached + ${T.reloads.fresh} fresh pages (${pageCount} pages, ${T.pagesCollected} of them collected; ${epochCount} bridges), socket drops ${T.drops}, page messages ${T.pageMessages}`);
console.log(`page error events: ${Object.entries(T.errorEvents).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`memory after warm-up → end (after GC): wasm ${mib(before.wasm)} → ${mib(after.wasm)} (${(growth('wasm') * 100).toFixed(1)}%), JS heap ${mib(before.heap)} → ${mib(after.heap)} (${(growth('heap') * 100).toFixed(1)}%), rss ${mib(after.rss)}; bound ${MEMORY_BOUND * 100}% (wasm: or 1 MiB)`);
if (violations.length) {
  console.log(`\nFAILED: ${violations.length} violation(s); replay with --seed ${SEED}`);
  const kinds = {};
  for (const v of violations) bump(kinds, v.what);
  for (const [what, n] of Object.entries(kinds)) console.log(`  ${n} × ${what}`);
} else {
  console.log('\nOK: every addressed call answered exactly once, nothing answered twice, every confirmation settled once, memory bounded');
}
server.close();
process.exit(violations.length ? 1 : 0);
