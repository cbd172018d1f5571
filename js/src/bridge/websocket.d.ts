// Type declarations of `@toolmark/bridge-wasm/bridge/websocket`.
import type { BridgeTransport } from './index.js';

type GlobalInstance<K extends string, Fallback> =
  typeof globalThis extends { readonly [P in K]: { readonly prototype: infer T } } ? T : Fallback;

/** A WebSocket (the DOM's, or e.g. the `ws` package's), as far as the transport uses it. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
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
  protocols?: string | string[] | undefined;
  /** Cap of the reconnect backoff (500 ms doubling); default 30000. */
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

/**
 * JSON text frames over a WebSocket, reconnecting with exponential backoff;
 * up to 100 outgoing messages are buffered while disconnected.
 */
export declare function websocketTransport<W extends WebSocketLike = DefaultWebSocket>(
  options: WebSocketTransportOptions<W>,
): BridgeTransport & { close(): void };

export {};
