// A real soketi (Pusher-protocol server, npm @soketi/soketi) started as a child process on
// free loopback ports, and the HTTP events API the way a Laravel backend publishes a
// broadcast: POST /apps/{id}/events signed with the app secret (Pusher's auth_signature).
import { spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('../../../node_modules/@soketi/soketi/bin/server.js', import.meta.url));

/** A port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function ready(url, child, output, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`soketi exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`soketi did not start within ${timeoutMs} ms:\n${output.join('')}`);
}

/**
 * Starts soketi with one app; resolves when its HTTP API answers /ready.
 * `close()` stops it (SIGTERM, then SIGKILL) and waits for the exit. `port`: listen
 * there (to start it again where a stopped one was), else on a free port.
 */
export async function startSoketi({ appId = 'toolmark-app', key = 'toolmark-key', secret = 'toolmark-secret', timeoutMs = 20_000, port: wanted } = {}) {
  const [port, metricsPort] = [wanted ?? (await freePort()), await freePort()];
  // Its own cwd: soketi reads a .env from there.
  const cwd = mkdtempSync(join(tmpdir(), 'toolmark-soketi-'));
  const output = [];
  const child = spawn(process.execPath, [server, 'start'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SOKETI_HOST: '127.0.0.1',
      SOKETI_PORT: String(port),
      SOKETI_METRICS_HOST: '127.0.0.1',
      SOKETI_METRICS_SERVER_PORT: String(metricsPort),
      SOKETI_METRICS_ENABLED: 'false',
      SOKETI_DEFAULT_APP_ID: appId,
      SOKETI_DEFAULT_APP_KEY: key,
      SOKETI_DEFAULT_APP_SECRET: secret,
      SOKETI_SHUTDOWN_GRACE_PERIOD: '0',
    },
  });
  child.stdout.on('data', (chunk) => output.push(String(chunk)));
  child.stderr.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    await ready(`${url}/ready`, child, output, timeoutMs);
  } catch (error) {
    await close();
    throw error;
  }

  /** A request to the HTTP API, signed as the Pusher server libraries sign it. */
  async function api(method, path, body, extra = {}) {
    const text = body === undefined ? '' : JSON.stringify(body);
    const params = { ...extra, auth_key: key, auth_timestamp: String(Math.floor(Date.now() / 1000)), auth_version: '1.0' };
    if (text) params.body_md5 = createHash('md5').update(text).digest('hex');
    const query = Object.keys(params).sort().map((name) => `${name}=${params[name]}`).join('&');
    const signature = createHmac('sha256', secret).update(`${method}\n${path}\n${query}`).digest('hex');
    const response = await fetch(`${url}${path}?${query}&auth_signature=${signature}`, {
      method,
      headers: text ? { 'content-type': 'application/json' } : {},
      body: text || undefined,
    });
    const answer = await response.text();
    // soketi answers a refused request with 200 and `{ error, code }` in the body.
    const json = response.ok ? JSON.parse(answer) : undefined;
    if (!json || json.error !== undefined) throw new Error(`soketi ${method} ${path}: ${response.status} ${answer}`);
    return json;
  }

  return {
    appId,
    key,
    secret,
    host: '127.0.0.1',
    port,
    url,
    output,
    close,
    /** Broadcasts `data` (JSON-encoded, as Laravel does) as `event` on `channel`. */
    publish: (channel, event, data) =>
      api('POST', `/apps/${appId}/events`, { name: event, channels: [channel], data: JSON.stringify(data) }),
    /** The server's view of a channel: `{ occupied, subscription_count }`. */
    channel: (channel) =>
      api('GET', `/apps/${appId}/channels/${encodeURIComponent(channel)}`, undefined, { info: 'subscription_count' }),
  };
}
