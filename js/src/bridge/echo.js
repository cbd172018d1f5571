// echoTransport({ echo, channel, event?, postUrl?, headers?, fetch? }): Laravel Echo in
// (private channels only), HTTP POST out to a same-origin URL.
// JS for now: the transports move to Rust (web-sys drivers) in their own issue.
const hasOwn = (value, key) => Object.prototype.hasOwnProperty.call(value, key);

function sameOriginUrl(postUrl) {
  const location = globalThis.location;
  if (!location || typeof location.href !== 'string') return postUrl; // Node: nothing to compare with
  let resolved;
  try {
    resolved = new URL(postUrl, location.href);
  } catch {
    throw new TypeError(`echoTransport: postUrl ${JSON.stringify(postUrl)} is not a valid URL`);
  }
  // An opaque origin ('null') is never the same as anything, itself included.
  if (resolved.origin === 'null' || resolved.origin !== location.origin) {
    throw new TypeError(`echoTransport: postUrl must be same-origin (${location.origin}), not ${resolved.origin}`);
  }
  return resolved.href;
}

export function echoTransport(options = {}) {
  const {
    echo,
    channel,
    event = '.toolmark.message',
    postUrl = '/toolmark/bridge',
    headers,
    fetch: fetchImpl = (...args) => globalThis.fetch(...args),
  } = options;
  if (!echo || typeof echo.private !== 'function') throw new TypeError('echoTransport: echo must be a Laravel Echo instance');
  if (typeof channel !== 'string' || channel === '') throw new TypeError('echoTransport: channel must be a non-empty string');
  if (typeof event !== 'string' || event === '') throw new TypeError('echoTransport: event must be a non-empty string');
  if (typeof postUrl !== 'string' && !(postUrl instanceof URL)) throw new TypeError('echoTransport: postUrl must be a string or URL');
  if (headers !== undefined && typeof headers !== 'function') throw new TypeError('echoTransport: headers must be a function');
  if (typeof fetchImpl !== 'function') throw new TypeError('echoTransport: fetch must be a function');
  const url = sameOriginUrl(String(postUrl));

  const subscription = echo.private(channel); // private channels only: the server authorizes them
  const handlers = new Set();
  let closed = false;

  return {
    async send(message) {
      if (closed) throw new Error('echoTransport: closed');
      const body = JSON.stringify(message);
      const response = await fetchImpl(url, {
        method: 'POST',
        credentials: 'same-origin',
        redirect: 'error', // a redirect is not a 2xx, and must not carry the body elsewhere
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'X-Requested-With': 'XMLHttpRequest',
          ...(headers ? headers() : undefined),
        },
        body,
      });
      if (!response || !response.ok) {
        throw new Error(`echoTransport: POST ${url} answered ${response ? response.status : 'nothing'}`);
      }
    },
    onMessage(callback) {
      if (closed) return () => {};
      // A broadcast payload is the message itself or { message } (no protocol message has that key).
      const handler = (payload) => {
        const wrapped = payload !== null && typeof payload === 'object' && !Array.isArray(payload) &&
          hasOwn(payload, 'message') && !hasOwn(payload, 'protocol');
        callback(wrapped ? payload.message : payload);
      };
      handlers.add(handler);
      subscription.listen(event, handler);
      return () => {
        if (!handlers.delete(handler)) return;
        subscription.stopListening(event, handler);
      };
    },
    close() {
      if (closed) return;
      closed = true;
      for (const handler of handlers) subscription.stopListening(event, handler);
      handlers.clear();
      if (typeof echo.leaveChannel === 'function') echo.leaveChannel(`private-${channel}`);
      else if (typeof echo.leave === 'function') echo.leave(channel);
    },
  };
}
