// websocketTransport({ url, protocols?, maxDelayMs?, terminalCloseCodes?, onOpen?, WebSocket? }):
// JSON text frames over a WebSocket, reconnecting with exponential backoff.
// JS for now: the transports move to Rust (web-sys drivers) in their own issue.
const FIRST_DELAY_MS = 500;
const MAX_BUFFERED = 100;
const MAX_FRAME_UNITS = 4 * 1048576; // UTF-16 code units; larger frames are dropped unparsed
const OPEN = 1;

export function websocketTransport(options = {}) {
  const {
    url,
    protocols,
    maxDelayMs = 30000,
    terminalCloseCodes = [],
    onOpen,
    WebSocket: Socket = globalThis.WebSocket,
  } = options;
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError('websocketTransport: url must be a string or URL');
  if (typeof Socket !== 'function') {
    throw new TypeError('websocketTransport: no WebSocket implementation (pass options.WebSocket, e.g. from the ws package)');
  }
  if (typeof maxDelayMs !== 'number' || !(maxDelayMs > 0)) throw new TypeError('websocketTransport: maxDelayMs must be a positive number');
  if (!Array.isArray(terminalCloseCodes) || !terminalCloseCodes.every(Number.isInteger)) {
    throw new TypeError('websocketTransport: terminalCloseCodes must be an array of integer close codes');
  }
  if (onOpen !== undefined && typeof onOpen !== 'function') throw new TypeError('websocketTransport: onOpen must be a function');

  const terminal = new Set(terminalCloseCodes);
  const listeners = new Set();
  const buffer = []; // outgoing JSON texts while disconnected, oldest first
  let socket; // the current socket (connecting or open)
  let ready = false; // open and onOpen settled
  let stopped = false; // close(), a terminal close code or a rejecting onOpen
  let delay = FIRST_DELAY_MS;
  let timer;

  function connect(first = false) {
    timer = undefined;
    if (stopped) return;
    let ws;
    try {
      ws = protocols === undefined ? new Socket(url) : new Socket(url, protocols);
    } catch (error) {
      if (first) throw error; // a bad url or protocol list: a configuration error
      retry();
      return;
    }
    socket = ws;
    ready = false;
    const held = []; // inbound messages before onOpen settles: delivered if it resolves
    try {
      ws.binaryType = 'arraybuffer'; // binary frames are dropped anyway; avoid Blob reads
    } catch {
      // some implementations refuse; irrelevant
    }
    ws.addEventListener('error', () => {}); // a close event follows
    ws.addEventListener('open', async () => {
      if (socket !== ws || stopped) return;
      try {
        if (onOpen) await onOpen(ws);
      } catch {
        stopped = true; // a rejecting onOpen (e.g. authentication failed) ends the transport
        clear();
        ws.close();
        return;
      }
      if (socket !== ws || stopped || ws.readyState !== OPEN) return;
      ready = true;
      delay = FIRST_DELAY_MS;
      while (buffer.length > 0 && ws.readyState === OPEN) ws.send(buffer.shift());
      for (const message of held.splice(0)) deliver(message);
    });
    ws.addEventListener('message', (event) => {
      if (socket !== ws || stopped) return;
      const data = event.data;
      if (typeof data !== 'string' || data.length > MAX_FRAME_UNITS) return;
      let message;
      try {
        message = JSON.parse(data);
      } catch {
        return;
      }
      if (ready) deliver(message);
      else if (held.push(message) > MAX_BUFFERED) held.shift();
    });
    ws.addEventListener('close', (event) => {
      if (socket !== ws) return;
      socket = undefined;
      ready = false;
      if (stopped) return;
      if (terminal.has(event.code)) {
        stopped = true;
        clear();
        return;
      }
      retry();
    });
  }

  function deliver(message) {
    if (stopped) return;
    for (const listener of [...listeners]) listener(message);
  }

  function retry() {
    if (stopped || timer !== undefined) return;
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, maxDelayMs);
  }

  function clear() {
    buffer.length = 0;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  }

  connect(true);

  return {
    send(message) {
      if (stopped) throw new Error('websocketTransport: closed, not reconnecting');
      const text = JSON.stringify(message);
      if (ready && socket && socket.readyState === OPEN) {
        socket.send(text);
        return;
      }
      buffer.push(text);
      if (buffer.length > MAX_BUFFERED) buffer.shift();
    },
    onMessage(callback) {
      listeners.add(callback);
      return () => listeners.delete(callback);
    },
    close() {
      stopped = true;
      clear();
      listeners.clear();
      const ws = socket;
      socket = undefined;
      ready = false;
      if (ws) ws.close(1000);
    },
  };
}
