// node benches/inbound-frames.mjs [pkgDir]: the inbound pipeline as a
// bridge on a WebSocket runs it, frames per second, in Node. An agent (a
// `ws` server in this process) sends windows of 32 frames of one kind
// (calls and describes are answered; cancels of unknown ids are not, so a
// describe follows each window of them) and waits for the answers. Ours: a
// registry with `bridge({ transport: websocketTransport(…) })` (the frame's
// text straight into the core). Baseline, same process, same agent: a `ws`
// client doing what a careful JS bridge does for a frame — `JSON.parse`,
// ajv's compiled validator of protocol/v1/agent-to-page.json, then for a
// call the tool and a `JSON.stringify`d result, for a describe a stored
// entry. Both pay the same loopback and `ws` framing; the ratio is of the
// whole path. Interleaved, median of 5 rounds. Prints numbers only.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ajvModule from 'ajv/dist/2020.js';
import { WebSocket, WebSocketServer } from 'ws';
import { corpus } from './support/inbound-corpus.mjs';

const dir = process.argv[2] || 'pkg';
const base = pathToFileURL(resolve(dir) + '/').href;
const { createToolmark } = await import(`${base}index.js`);
const { bridge } = await import(`${base}bridge/index.js`);
const { websocketTransport } = await import(`${base}bridge/websocket.js`);
const Ajv2020 = ajvModule.default.default ?? ajvModule.default;
const validate = new Ajv2020({ strict: false, strictNumbers: true })
  .compile(JSON.parse(readFileSync(resolve(dir, 'protocol/v1/agent-to-page.json'), 'utf8')));

const WINDOW = 32;
const tools = {
  'signup.fill': (input) => ({ saved: true, fields: Object.keys(input).length }),
  'crm.import': (input) => ({ imported: input.rows.length }),
};
const register = (tm) => {
  for (const [full, run] of Object.entries(tools)) {
    const [scope, name] = full.split('.');
    tm.scope(scope).register({ name, description: `The ${name} tool`, hints: { readOnly: true }, run });
  }
};

// The agent: one server, each page connection in turn.
const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 8 * 1048576 });
await new Promise((r) => server.once('listening', r));
const url = `ws://127.0.0.1:${server.address().port}`;
function nextPeer() {
  return new Promise((resolvePeer) => server.once('connection', (socket) => {
    let waiting = null;
    let answers = 0;
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.type === 'manifest' && !resolvePeer.done) {
        resolvePeer.done = true;
        resolvePeer({ clientId: message.clientId, socket, expect: (n) => new Promise((r) => { answers = 0; waiting = [n, r]; }) });
      } else if (message.type === 'result') {
        if (message.result.status !== 'ok') throw new Error(JSON.stringify(message).slice(0, 300));
        if (waiting && ++answers === waiting[0]) waiting[1]();
      }
    });
  }));
}

// The baseline page: a JS bridge for the same frames.
function baselinePage() {
  const clientId = '7b8f0c55-2f4f-4e8e-9a51-7d7f3f1d6a10';
  const socket = new WebSocket(url, { maxPayload: 8 * 1048576 });
  const entries = Object.fromEntries(Object.keys(tools).map((name) => [name, { name, llmName: name.replace('.', '__'), description: `The ${name} tool`, hints: { readOnly: true }, inputSchema: true }]));
  socket.on('open', () => socket.send(JSON.stringify({ protocol: 1, type: 'manifest', clientId, rev: 1, tools: Object.values(entries) })));
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (!validate(message)) return;
    let result;
    if (message.type === 'call') result = { status: 'ok', data: tools[message.tool](message.input) };
    else if (message.type === 'describe') result = { status: 'ok', data: entries[message.tool] };
    else return;
    socket.send(JSON.stringify({ protocol: 1, type: 'result', clientId, id: message.id, result }));
  });
  return { close: () => socket.close() };
}

const { kinds } = corpus();
let serial = 0;
const freshId = () => `00000000-0000-4000-8000-${String(serial++).padStart(12, '0')}`;
/** `count` frames of `kind` for `clientId`, each with a new id, as text. */
function frames(kind, clientId, count) {
  const text = JSON.stringify({ ...kinds[kind], clientId, id: '@ID@' });
  const at = text.indexOf('@ID@');
  return Array.from({ length: count }, () => text.slice(0, at) + freshId() + text.slice(at + 4));
}

async function framesPerSecond(peer, kind, windows) {
  const answered = kind !== 'cancel';
  const batches = Array.from({ length: windows }, () => frames(kind, peer.clientId, WINDOW));
  const fences = frames('describe', peer.clientId, answered ? 0 : windows);
  const start = performance.now();
  for (let w = 0; w < windows; w++) {
    const done = peer.expect(answered ? WINDOW : 1);
    for (const text of batches[w]) peer.socket.send(text);
    if (!answered) peer.socket.send(fences[w]);
    await done;
  }
  return (windows * WINDOW * 1000) / (performance.now() - start);
}

const oursPeer = nextPeer();
const tm = createToolmark();
register(tm);
const transport = websocketTransport({ url, WebSocket });
tm.use(bridge({ transport }));
const ours = await oursPeer;
const theirsPeer = nextPeer();
const page = baselinePage();
const theirs = await theirsPeer;

const plan = { 'small call': 40, describe: 40, cancel: 40, 'call, 100 KB input': 4, 'call, ~1 MiB input': 1 };
const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
console.log(`Node ${process.version}: frames per second through a WebSocket on loopback, windows of ${WINDOW}`);
console.log('kind\tours/s\tbaseline/s\tratio');
for (const [kind, windows] of Object.entries(plan)) {
  const samples = { ours: [], theirs: [] };
  for (let round = -1; round < 5; round++) {
    const a = await framesPerSecond(ours, kind, windows);
    const b = await framesPerSecond(theirs, kind, windows);
    if (round >= 0) {
      samples.ours.push(a);
      samples.theirs.push(b);
    }
  }
  const [a, b] = [median(samples.ours), median(samples.theirs)];
  console.log([kind, a.toFixed(0), b.toFixed(0), (a / b).toFixed(2)].join('\t'));
}
transport.close();
page.close();
server.close();
process.exit(0);
