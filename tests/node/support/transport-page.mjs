// The page side the transport tests share, the same in Node and in Chromium: the pages
// import this module from the served repository (/tests/node/support/transport-page.mjs),
// where the package import below resolves to the /pkg/ they load.
import { createToolmark } from '../../../pkg/index.js';

/**
 * The `greet` tool: `greet({ name })` answers `hello <name>`, as that text or, with
 * `asObject`, as `{ text }`; `onRun(name)` sees every run first.
 */
export function greetTool({ asObject = false, onRun } = {}) {
  return {
    name: 'greet',
    description: 'Greets someone',
    hints: { readOnly: true },
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    run: ({ name }) => {
      onRun?.(name);
      const text = `hello ${name}`;
      return asObject ? { text } : text;
    },
  };
}

/**
 * A registry with `greet` (`greetTool(greet)`) on it, and `errors`: its error events, each
 * as `recordError` keeps it.
 */
export function greeterPage({ greet, recordError = (error) => error } = {}) {
  const tm = createToolmark();
  const errors = [];
  tm.events.on('error', (error) => errors.push(recordError(error)));
  tm.register(greetTool(greet));
  return { tm, errors };
}

/** laravel-echo's options for a Pusher-protocol server at `wsHost:wsPort`, over plain ws only. */
export function pusherEchoOptions({ key, wsHost, wsPort }) {
  return {
    broadcaster: 'pusher',
    key,
    cluster: 'mt1',
    wsHost,
    wsPort,
    forceTLS: false,
    enabledTransports: ['ws'],
    disableStats: true,
  };
}

/**
 * What `transport.onMessage(callback)` and `transport.onStatus(callback)` do with
 * callbacks that are no functions: per try, `method: subscribed` or what it threw.
 */
export function nonFunctionRefusals(transport) {
  const seen = [];
  for (const method of ['onMessage', 'onStatus']) {
    for (const callback of ['nope', undefined, {}]) {
      try {
        transport[method](callback);
        seen.push(`${method}: subscribed`);
      } catch (error) {
        seen.push(`${method}: ${error.name} ${error.code}: ${error.message}`);
      }
    }
  }
  return seen;
}
