// Type declarations of `@toolmark/bridge-wasm/bridge/websocket`.
import type { BridgeTransport, TransportStatus } from './index.js';

type GlobalInstance<K extends string, Fallback> =
  typeof globalThis extends { readonly [P in K]: { readonly prototype: infer T } } ? T : Fallback;

/**
 * A WebSocket (the DOM's, or e.g. the `ws` package's), as far as the transport uses it:
 * its `open`, `message`, `close` and `error` listeners are added and removed again, and
 * `binaryType` is set to `'arraybuffer'` where it can be.
 */
export interface WebSocketLike {
  binaryType?: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
  removeEventListener(type: string, listener: (event: any) => void): void;
}

/** A WebSocket class. */
export interface WebSocketConstructorLike<W extends WebSocketLike = WebSocketLike> {
  new (url: string | GlobalInstance<'URL', never>, protocols?: string | string[]): W;
}

/** The global WebSocket's instance type when the consumer has one (DOM lib). */
export type DefaultWebSocket = GlobalInstance<'WebSocket', WebSocketLike>;

export interface WebSocketTransportOptions<W extends WebSocketLike = DefaultWebSocket> {
  /** `wss://…` in production; the server MUST authenticate the socket. */
  url: string | GlobalInstance<'URL', never>;
  protocols?: string | readonly string[] | undefined;
  /**
   * Cap of the reconnect backoff (500 ms doubling; the cap bounds the first delay too);
   * default 30000. The delay starts over only after a connection stayed up 10 s.
   */
  maxDelayMs?: number | undefined;
  /** Close codes after which the transport stops reconnecting. */
  terminalCloseCodes?: readonly number[] | undefined;
  /**
   * Runs on every (re)connection before anything is sent (e.g. an
   * authentication frame); a rejection stops the transport.
   */
  onOpen?: ((socket: W) => void | Promise<void>) | undefined;
  /** The WebSocket class; default the global `WebSocket` (pass `ws`'s in Node without one). */
  WebSocket?: WebSocketConstructorLike<W> | undefined;
}

/** What `websocketTransport` returns (its methods need it as `this`). */
export interface WebSocketTransport extends BridgeTransport {
  /** Sends `message` as a JSON text frame, or buffers it while not connected; throws once stopped. */
  send(message: unknown): void;
  /** `callback` gets each inbound JSON message (binary, oversized and non-JSON frames are dropped). */
  onMessage(callback: (message: unknown) => void): () => void;
  /** Stops for good: closes the socket with 1000 and cancels a pending reconnect. */
  close(): void;
  /**
   * The connection state now: `connecting` (attempt n) at each socket, `open` once
   * connected (and `onOpen` settled), `closed` with the socket's code and reason, then
   * `reconnecting` with the next attempt and its delay; `closed` with `terminal: true`
   * after a `terminalCloseCodes` close, a rejecting `onOpen` or `close()`.
   */
  readonly status: TransportStatus;
  /** `callback` gets each new connection state; returns the function that removes it. */
  onStatus(callback: (status: TransportStatus) => void): () => void;
}

/**
 * JSON text frames over a WebSocket, reconnecting with exponential backoff;
 * up to 100 outgoing messages are buffered while disconnected. A bridge over
 * it reads each frame's text in the core (no `JSON.parse`).
 */
export declare function websocketTransport<W extends WebSocketLike = DefaultWebSocket>(
  options: WebSocketTransportOptions<W>,
): WebSocketTransport;

export {};
