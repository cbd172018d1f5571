// postMessageTransport({ target, targetOrigin, allowedOrigins, source? }): iframes and
// extensions. Every message travels as { toolmark: 1, message }.
// JS for now: the transports move to Rust (web-sys drivers) in their own issue.
const SPECIAL = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:']);

/** True for a serialized origin scheme://host[:port]: no path, no trailing slash, no wildcard. */
function isSerializedOrigin(value) {
  if (typeof value !== 'string') return false;
  const match = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9.\-[\]:]+)$/.exec(value);
  if (!match) return false;
  let url;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  // Special schemes: the URL parser's own serialization must give back the exact string
  // (lower case, punycode, no default port). Others (chrome-extension://id, moz-extension://uuid)
  // have an opaque origin in some URL parsers, so their host[:port] is checked directly.
  if (SPECIAL.has(url.protocol)) return url.origin === value;
  return url.protocol === `${match[1]}:` && url.host === match[2];
}

export function postMessageTransport(options = {}) {
  const { target, targetOrigin, allowedOrigins, source = globalThis } = options;
  if (!target || typeof target.postMessage !== 'function') throw new TypeError('postMessageTransport: target must have postMessage (a window)');
  if (targetOrigin === '*') throw new TypeError("postMessageTransport: targetOrigin '*' is not allowed; give the exact origin");
  if (!isSerializedOrigin(targetOrigin)) {
    throw new TypeError(`postMessageTransport: targetOrigin must be a serialized origin scheme://host[:port], not ${JSON.stringify(targetOrigin)}`);
  }
  if (!Array.isArray(allowedOrigins) || allowedOrigins.length === 0) {
    throw new TypeError('postMessageTransport: allowedOrigins must be a non-empty array of origins');
  }
  for (const origin of allowedOrigins) {
    if (origin === '*' || origin === 'null') throw new TypeError(`postMessageTransport: ${JSON.stringify(origin)} is not allowed in allowedOrigins`);
    if (!isSerializedOrigin(origin)) {
      throw new TypeError(`postMessageTransport: allowedOrigins entry must be a serialized origin scheme://host[:port], not ${JSON.stringify(origin)}`);
    }
  }
  if (!source || typeof source.addEventListener !== 'function' || typeof source.removeEventListener !== 'function') {
    throw new TypeError('postMessageTransport: source must be an event target (window)');
  }
  const allowed = new Set(allowedOrigins);
  const listeners = new Set();
  let closed = false;

  return {
    send(message) {
      if (closed) throw new Error('postMessageTransport: closed');
      target.postMessage({ toolmark: 1, message }, targetOrigin);
    },
    onMessage(callback) {
      if (closed) return () => {};
      const listener = (event) => {
        if (!event || event.source !== target || !allowed.has(event.origin)) return;
        const data = event.data;
        if (data === null || typeof data !== 'object' || data.toolmark !== 1 || !Object.prototype.hasOwnProperty.call(data, 'message')) return;
        callback(data.message);
      };
      listeners.add(listener);
      source.addEventListener('message', listener);
      return () => {
        listeners.delete(listener);
        source.removeEventListener('message', listener);
      };
    },
    close() {
      closed = true;
      for (const listener of listeners) source.removeEventListener('message', listener);
      listeners.clear();
    },
  };
}
