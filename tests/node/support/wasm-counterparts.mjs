// The real counterparts of tests/wasm_transports.rs (the transports inside the test's
// WebAssembly, in wasm-bindgen-test-runner's page), started by js/build/wasm-test.mjs:
// - a `ws` agent (restarted on the same port when the test asks),
// - the agent and attacker pages for postMessage, on two more origins
//   (http://localhost:PORT and http://127.0.0.1:PORT of the control server),
// - soketi and the Laravel-like backend for Echo, with laravel-echo and pusher-js
//   bundled by esbuild into one module,
// - a control server the test drives them through (CORS `*`: the test page is on the
//   runner's own origin), and a proxy Chromium sends the runner's origin through, so
//   that the backend answers that origin's /broadcasting/auth and /toolmark/bridge
//   (echoTransport's postUrl must be same-origin with the page; the runner serves
//   nothing but GET).
import { createServer, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startWsAgent, waitFor, sleep } from './ws-agent.mjs';
import { readBody, startEchoBackend } from './echo-backend.mjs';
import { startSoketi } from './soketi.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const EVENT = 'toolmark.message'; // Laravel's broadcastAs(); Echo listens to '.toolmark.message'
export const ECHO_CHANNEL = 'toolmark.7.42';
const MAX_FRAME_UNITS = 4 * 1048576; // the WebSocket transport's frame limit

// The frames of the postMessage test: they report what they see to the control server.
// COEP and CORP: the runner's page is cross-origin isolated (COEP require-corp).
const FRAME_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'cross-origin',
};

// The agent: speaks the envelope to its parent (origin in ?parent=), only to and from it;
// sends a call when the page tells it to.
const AGENT_PAGE = `<!doctype html><title>agent</title><script type="module">
const query = new URLSearchParams(location.search);
const parentOrigin = query.get('parent');
const report = (event) => fetch('/pm/report', { method: 'POST', body: JSON.stringify(event) });
let clientId;
addEventListener('message', (e) => {
  if (e.source !== parent || e.origin !== parentOrigin) return;
  const data = e.data;
  if (data?.command === 'call') {
    const id = crypto.randomUUID();
    const message = { protocol: 1, type: 'call', clientId, id, tool: 'greet', input: { name: data.name } };
    parent.postMessage({ toolmark: 1, message }, parentOrigin);
    return;
  }
  if (data?.toolmark !== 1) return;
  const message = data.message;
  if (message?.type === 'manifest' && clientId === undefined) {
    clientId = message.clientId;
    report({ kind: 'manifest', clientId, tools: message.tools.map((t) => t.name) });
  } else if (message?.type === 'result') {
    report({ kind: 'result', message });
  }
});
report({ kind: 'agent-ready' });
</script>`;

// The attacker on a third origin: knows the clientId (the page tells it, as a leak
// would), posts well-formed calls to the page; records everything it is sent.
const ATTACKER_PAGE = `<!doctype html><title>attacker</title><script type="module">
const report = (event) => fetch('/pm/report', { method: 'POST', body: JSON.stringify(event) });
const received = [];
addEventListener('message', (e) => {
  const data = e.data;
  if (data?.command === 'attack') {
    const call = (id) => ({ protocol: 1, type: 'call', clientId: data.clientId, id, tool: 'greet', input: { name: 'attacker ' + id } });
    const [star, exact, bare] = data.ids;
    parent.postMessage({ toolmark: 1, message: call(star) }, '*');
    parent.postMessage({ toolmark: 1, message: call(exact) }, data.pageOrigin);
    parent.postMessage(call(bare), '*');
  } else if (data?.command === 'report') {
    report({ kind: 'attacker-received', received });
  } else {
    received.push({ origin: e.origin, data });
  }
});
report({ kind: 'attacker-ready' });
</script>`;

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

/** A bundle of laravel-echo and pusher-js (web build) as one ES module. */
async function echoBundle() {
  const result = await build({
    stdin: {
      contents: "export { default as Echo } from 'laravel-echo'; export { default as Pusher } from 'pusher-js';",
      resolveDir: root,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/**
 * Starts every counterpart; returns `{ controlUrl, webdriverJson, close() }`.
 * `webdriverJson`: a copy of `baseWebdriverJson` with Chromium's proxy flags added.
 */
export async function startCounterparts({ baseWebdriverJson }) {
  const started = [];
  const close = async () => {
    for (const stop of started.splice(0).reverse()) await stop().catch(() => {});
  };
  try {
    // WebSocket: the agent end, one state across restarts on the same port.
    let wsAgent = await startWsAgent();
    const wsPort = wsAgent.port;
    const generations = [wsAgent];
    started.push(() => wsAgent.close());
    const wsResults = () =>
      generations.flatMap((agent, generation) => agent.messages('result').map((message) => ({ generation, message })));
    // The page announces itself once: a reconnect to a restarted server sends no manifest.
    const wsManifest = () =>
      waitFor(() => generations.flatMap((agent) => agent.messages('manifest')).at(-1), { what: 'manifest on the socket' });

    // Echo: soketi, the backend (signing with soketi's secret), the client bundle.
    const soketi = await startSoketi();
    started.push(() => soketi.close());
    const backend = await startEchoBackend({
      key: soketi.key,
      secret: soketi.secret,
      authorize: ({ channel }) => channel === `private-${ECHO_CHANNEL}`,
    });
    started.push(() => backend.close());
    const bundle = await echoBundle();

    const pmEvents = [];
    const routes = {
      'GET /config': () => ({
        ws: wsAgent.url,
        agentPage: `http://localhost:${controlPort}/agent.html`,
        attackerPage: `http://127.0.0.1:${controlPort}/attacker.html`,
        echoBundle: `${controlUrl}/echo.js`,
        echo: { key: soketi.key, wsHost: soketi.host, wsPort: soketi.port, channel: ECHO_CHANNEL },
        crossOriginPostUrl: `http://localhost:${controlPort}/toolmark/bridge`,
      }),
      // A call from the agent over the socket; with `wait`, its result.
      'POST /ws/call': async ({ tool, input, wait = true }) => {
        const manifest = await wsManifest();
        const message = { protocol: 1, type: 'call', clientId: manifest.clientId, id: crypto.randomUUID(), tool, input };
        wsAgent.latest().send(JSON.stringify(message));
        if (!wait) return { id: message.id };
        const { message: result } = await waitFor(() => wsResults().find((r) => r.message.id === message.id), { what: 'result' });
        // Every frame the page sent: nothing answered what was dropped.
        return { id: message.id, result, results: wsResults().length, frames: generations.reduce((n, agent) => n + agent.frames.length, 0) };
      },
      // Frames the transport drops: a binary one and one of 4 × 1048576 + 1 UTF-16
      // code units, each holding a well-formed call, and text that is not JSON.
      'POST /ws/junk': async () => {
        const manifest = await wsManifest();
        const call = (name) => ({ protocol: 1, type: 'call', clientId: manifest.clientId, id: crypto.randomUUID(), tool: 'greet', input: { name } });
        const binary = call('binary');
        wsAgent.latest().send(Buffer.from(JSON.stringify(binary)), { binary: true });
        const text = JSON.stringify(call('oversized'));
        wsAgent.latest().send(`${text.slice(0, -1)}${' '.repeat(MAX_FRAME_UNITS + 1 - text.length)}}`);
        wsAgent.latest().send('{"protocol":1,"type":"call", not json');
        wsAgent.latest().send('hello');
        return {};
      },
      // The server killed: sockets terminated, nothing listens on the port.
      'POST /ws/kill': async () => {
        await wsAgent.close();
        return {};
      },
      'POST /ws/start': async () => {
        wsAgent = await startWsAgent({ port: wsPort });
        generations.push(wsAgent);
        return { generation: generations.length - 1 };
      },
      // Every result with that id, once one has come and `settleMs` more have passed.
      'POST /ws/results': async ({ id, settleMs = 0 }) => {
        await waitFor(() => wsResults().some((r) => r.message.id === id), { what: `result ${id}` });
        await sleep(settleMs);
        return { results: wsResults().filter((r) => r.message.id === id), generations: generations.length };
      },
      'POST /pm/report': (event) => {
        pmEvents.push(event);
        return {};
      },
      // The first report of that kind (and result id) from a frame.
      'POST /pm/wait': ({ kind, id }) =>
        waitFor(() => pmEvents.find((e) => e.kind === kind && (id === undefined || e.message?.id === id)), { what: `frame report ${kind}` }),
      // A call published through soketi as Laravel broadcasts it; its result as POSTed.
      'POST /echo/call': async ({ name }) => {
        const manifest = await waitFor(() => backend.posts.filter((p) => p.json?.type === 'manifest').at(-1), { what: 'manifest POST' });
        await waitFor(async () => (await soketi.channel(`private-${ECHO_CHANNEL}`)).subscription_count === 1, { what: 'subscription on soketi' });
        const message = { protocol: 1, type: 'call', clientId: manifest.json.clientId, id: crypto.randomUUID(), tool: 'greet', input: { name } };
        await soketi.publish(`private-${ECHO_CHANNEL}`, EVENT, { message });
        const post = await waitFor(() => backend.posts.find((p) => p.json?.type === 'result' && p.json.id === message.id), { what: 'result POST' });
        return { id: message.id, result: post.json, sameOriginRequest: post.headers['sec-fetch-site'] };
      },
      'POST /echo/status': ({ status }) => {
        backend.postStatus = status;
        return {};
      },
      'POST /echo/state': () => ({
        auths: backend.authRequests.map((r) => [r.channel, r.granted]),
        posts: backend.posts.map((p) => [p.json?.type, p.status]),
      }),
    };

    const control = createServer(async (req, res) => {
      const cors = { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' };
      const path = new URL(req.url, 'http://x').pathname;
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type' }).end();
        return;
      }
      if (req.method === 'GET' && path === '/agent.html') return res.writeHead(200, FRAME_HEADERS).end(AGENT_PAGE);
      if (req.method === 'GET' && path === '/attacker.html') return res.writeHead(200, FRAME_HEADERS).end(ATTACKER_PAGE);
      if (req.method === 'GET' && path === '/echo.js') {
        return res.writeHead(200, { ...cors, 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
      }
      const route = routes[`${req.method} ${path}`];
      if (!route) return res.writeHead(404, cors).end();
      try {
        const text = await readBody(req);
        const answer = await route(text ? JSON.parse(text) : {});
        res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(answer));
      } catch (error) {
        res.writeHead(500, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error?.message ?? error) }));
      }
    });
    const controlPort = await listen(control);
    const controlUrl = `http://127.0.0.1:${controlPort}`;
    started.push(() => new Promise((resolve) => { control.closeAllConnections(); control.close(resolve); }));

    // The proxy: the backend's two routes, on whatever origin is asked for; any other
    // loopback request passed on as it is (the runner's files and its page).
    const backendRoutes = new Set(['/broadcasting/auth', '/toolmark/bridge']);
    const proxy = createServer((req, res) => {
      let target;
      try {
        target = new URL(req.url);
      } catch {
        return res.writeHead(400).end();
      }
      const local = target.hostname === '127.0.0.1' || target.hostname === 'localhost';
      if (!local) return res.writeHead(502).end(); // no traffic off this machine
      const to = backendRoutes.has(target.pathname) ? new URL(backend.url) : target;
      const upstream = httpRequest(
        { host: '127.0.0.1', port: to.port, method: req.method, path: target.pathname + target.search, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end());
      req.pipe(upstream);
    });
    proxy.on('connect', (_req, socket) => socket.destroy()); // HTTPS off this machine: refused
    const proxyPort = await listen(proxy);
    started.push(() => new Promise((resolve) => { proxy.closeAllConnections(); proxy.close(resolve); }));

    // Chromium: the runner's origin (an unknown 127.0.0.1 port) through the proxy,
    // the counterparts' own origins direct.
    const capabilities = JSON.parse(readFileSync(baseWebdriverJson, 'utf8'));
    const direct = ['localhost', `127.0.0.1:${controlPort}`, `127.0.0.1:${wsPort}`, `127.0.0.1:${soketi.port}`];
    capabilities['goog:chromeOptions'].args.push(
      `--proxy-server=http://127.0.0.1:${proxyPort}`,
      `--proxy-bypass-list=<-loopback>;${direct.join(';')}`,
    );
    const dir = mkdtempSync(join(tmpdir(), 'toolmark-wasm-test-'));
    started.push(async () => rmSync(dir, { recursive: true, force: true }));
    const webdriverJson = join(dir, 'webdriver.json');
    writeFileSync(webdriverJson, JSON.stringify(capabilities));

    return { controlUrl, webdriverJson, close };
  } catch (error) {
    await close();
    throw error;
  }
}
