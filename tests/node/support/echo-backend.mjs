// A minimal Laravel-like backend for echoTransport tests, all on one 127.0.0.1 origin:
// - a Pusher-protocol (v7) WebSocket server at /app/<key> (connection_established,
//   ping/pong, subscribe/unsubscribe; private-… channels need a valid auth signature),
// - POST /broadcasting/auth (the channel authorization route: `authorize` decides),
// - POST /toolmark/bridge (the echoTransport postUrl: recorded, status configurable),
// - static files under `root` and HTML `pages` (each may set cookies).
import { createHmac, randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { WebSocketServer } from 'ws';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
};

export function parseCookies(header = '') {
  const out = {};
  for (const part of header.split(/;\s*/)) {
    const at = part.indexOf('=');
    if (at > 0) out[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
  }
  return out;
}

/** The text of a request's body. */
export const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

/** The app's page: Laravel's CSRF meta tag, and pusher-js's web build (window.Pusher, for laravel-echo). */
export const ECHO_APP_PAGE = `<!doctype html>
<meta name="csrf-token" content="csrf-meta">
<title>app</title>
<script src="/node_modules/pusher-js/dist/web/pusher.js"></script>`;

/**
 * Opens `url` (an ECHO_APP_PAGE on a backend serving the repository) in a new page of
 * `browser`, and attaches a bridge with `greet` over echoTransport on `channel`, through
 * laravel-echo to the Pusher-protocol server `key` at `wsHost:wsPort`. Every send carries
 * X-XSRF-TOKEN: `xsrf`, or without it the URL-decoded XSRF-TOKEN cookie as it is then.
 * The page keeps `window.tm`, `echo`, `echoTransport`, `transport`, `detach`, and `errors`
 * (`{ code, message }` of every error event).
 */
export async function openEchoApp(browser, url, { key, wsHost, wsPort, channel, xsrf }) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.evaluate(async ({ key, wsHost, wsPort, channel, xsrf }) => {
    const { default: Echo } = await import('/node_modules/laravel-echo/dist/echo.js');
    const { greeterPage, pusherEchoOptions } = await import('/tests/node/support/transport-page.mjs');
    const { bridge } = await import('/pkg/bridge/index.js');
    const { echoTransport } = await import('/pkg/bridge/echo.js');
    const echo = new Echo(pusherEchoOptions({ key, wsHost, wsPort }));
    // The spec's helper: the URL-decoded XSRF-TOKEN cookie.
    const xsrfToken = () => decodeURIComponent(document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/)?.[1] ?? '');
    const { tm, errors } = greeterPage({ recordError: (e) => ({ code: e.code, message: e.message }) });
    window.errors = errors;
    window.tm = tm;
    window.echo = echo;
    window.echoTransport = echoTransport;
    window.transport = echoTransport({ echo, channel, headers: () => ({ 'X-XSRF-TOKEN': xsrf ?? xsrfToken() }) });
    window.detach = tm.use(bridge({ transport: window.transport }));
  }, { key, wsHost, wsPort, channel, xsrf });
  return page;
}

/**
 * @param {object} options
 * @param {string} [options.root]   directory served for GET requests
 * @param {Record<string, {html: string, cookies?: string[]}>} [options.pages]
 * @param {(request: {channel: string, headers: object, cookies: object}) => boolean} options.authorize
 */
export async function startEchoBackend({ root, pages = {}, authorize, key = 'app-key', secret = 'app-secret' }) {
  const sign = (socketId, channel) => createHmac('sha256', secret).update(`${socketId}:${channel}`).digest('hex');
  const backend = {
    key,
    authRequests: [], // { channel, socketId, headers, cookies, granted }
    posts: [], // { headers, cookies, body, json, status }
    postStatus: 200, // status answered on the bridge route
    subscriptions: [], // every pusher:subscribe seen: { channel, granted }
    unsubscriptions: [],
    sockets: new Set(),
    onPost: undefined, // (json) => void
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const cookies = parseCookies(req.headers.cookie);
    if (req.method === 'POST' && url.pathname === '/broadcasting/auth') {
      const text = await readBody(req);
      const form = req.headers['content-type']?.includes('json') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
      const channel = form.channel_name;
      const socketId = form.socket_id;
      const granted = typeof channel === 'string' && channel.startsWith('private-') && !!authorize({ channel, headers: req.headers, cookies });
      backend.authRequests.push({ channel, socketId, headers: req.headers, cookies, granted });
      if (!granted) {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"This action is unauthorized."}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ auth: `${key}:${sign(socketId, channel)}` }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/toolmark/bridge') {
      const body = await readBody(req);
      let json;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const status = backend.postStatus;
      backend.posts.push({ headers: req.headers, cookies, body, json, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status < 300 ? '{"ok":true}' : '{"message":"failed"}');
      if (json !== undefined && backend.onPost) backend.onPost(json);
      return;
    }
    const page = pages[url.pathname];
    if (req.method === 'GET' && page) {
      const headers = { 'content-type': TYPES['.html'] };
      if (page.cookies) headers['set-cookie'] = page.cookies;
      res.writeHead(200, headers).end(page.html);
      return;
    }
    if (req.method === 'GET' && root) {
      const file = normalize(join(root, decodeURIComponent(url.pathname)));
      try {
        if (!file.startsWith(root) || !statSync(file).isFile()) throw new Error('no');
        res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' }).end(readFileSync(file));
        return;
      } catch {
        // 404 below
      }
    }
    res.writeHead(404).end();
  });

  // The Pusher protocol, as far as pusher-js needs it.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url, 'http://x').pathname !== `/app/${key}`) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  wss.on('connection', (ws) => {
    const socketId = `${randomInt(1e9)}.${randomInt(1e9)}`;
    const channels = new Set();
    const peer = { ws, socketId, channels };
    backend.sockets.add(peer);
    const send = (event, data, channel) =>
      ws.send(JSON.stringify({ event, ...(channel ? { channel } : {}), data: typeof data === 'string' ? data : JSON.stringify(data) }));
    send('pusher:connection_established', { socket_id: socketId, activity_timeout: 120 });
    ws.on('message', (raw) => {
      let frame;
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        return;
      }
      const data = typeof frame.data === 'string' ? safeParse(frame.data) : frame.data ?? {};
      if (frame.event === 'pusher:ping') {
        send('pusher:pong', {});
      } else if (frame.event === 'pusher:subscribe') {
        const channel = data.channel;
        const isPrivate = channel.startsWith('private-');
        const granted = !isPrivate || data.auth === `${key}:${sign(socketId, channel)}`;
        backend.subscriptions.push({ channel, granted });
        if (!granted) {
          send('pusher:error', { code: 4009, message: 'Invalid signature' });
          return;
        }
        channels.add(channel);
        send('pusher_internal:subscription_succeeded', {}, channel);
      } else if (frame.event === 'pusher:unsubscribe') {
        backend.unsubscriptions.push(data.channel);
        channels.delete(data.channel);
      }
    });
    ws.on('close', () => backend.sockets.delete(peer));
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return Object.assign(backend, {
    url: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    /** Sockets currently subscribed to `channel`. */
    subscribers: (channel) => [...backend.sockets].filter((peer) => peer.channels.has(channel)).length,
    /** Whether the socket with that pusher socket_id is subscribed to `channel`. */
    subscribed: (socketId, channel) => [...backend.sockets].some((peer) => peer.socketId === socketId && peer.channels.has(channel)),
    /** Sends an event to every socket subscribed to `channel` (data is JSON-encoded, as Laravel does). */
    broadcast(channel, event, payload) {
      const frame = JSON.stringify({ event, channel, data: JSON.stringify(payload) });
      for (const peer of backend.sockets) if (peer.channels.has(channel)) peer.ws.send(frame);
    },
    async close() {
      for (const peer of backend.sockets) peer.ws.terminate();
      wss.close();
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
