// node benches/held-frames.mjs [pkgDir] [--frames N] [--ascii]: the module's
// WebAssembly memory while a websocketTransport's `onOpen` is pending and
// the server sends N frames (default 100) at the frame limit, 4 × 1048576
// UTF-16 code units each ('é', 2 UTF-8 bytes a unit; `--ascii`: 'x'). The
// frames are held (or dropped) by the transport, never delivered. Prints
// the memory before the first frame, after one, and after all; WebAssembly
// memory never shrinks, so these are high-water marks. Asserts nothing.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const frames = option('--frames', 100);
const char = args.includes('--ascii') ? 'x' : 'é';
const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) || 'pkg';
const base = pathToFileURL(resolve(dir) + '/').href;
const { websocketTransport } = await import(`${base}bridge/websocket.js`);

const MAX_FRAME = 4 * 1048576;
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((r) => server.once('listening', r));
const connected = new Promise((r) => server.once('connection', r));

// Counted by a listener added after the transport's: when it runs, the
// transport has handled the frame.
let seen = 0;
let release;
const transport = websocketTransport({
  url: `ws://127.0.0.1:${server.address().port}`,
  WebSocket,
  onOpen: (ws) => {
    ws.addEventListener('message', () => seen++);
    return new Promise((r) => (release = r));
  },
});
const mib = () => (transport.constructor.__stats().memoryBytes / 1048576).toFixed(1);
const socket = await connected;
const frame = JSON.stringify(char.repeat(MAX_FRAME - 2));
const until = async (n) => {
  while (seen < n) await new Promise((r) => setTimeout(r, 5));
};

const start = mib();
socket.send(frame);
await until(1);
const one = mib();
for (let i = 1; i < frames; i++) socket.send(frame);
await until(frames);
const all = mib();
console.log(`${resolve(dir)}: ${frames} frames of ${MAX_FRAME} UTF-16 units ('${char}') held while onOpen is pending; WebAssembly memory, MiB`);
console.log(`before: ${start}  after 1: ${one}  after ${frames}: ${all}`);
release?.();
transport.close();
server.close();
for (const client of server.clients) client.terminate();
