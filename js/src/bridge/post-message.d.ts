// Type declarations of `@toolmark/bridge-wasm/bridge/post-message`.
import type { BridgeTransport, TransportStatus } from './index.js';

/** The envelope every message travels in. */
export interface PostMessageEnvelope {
  toolmark: 1;
  message: unknown;
}

/** The other window (an iframe's `contentWindow`, `window.parent`, an opener…). */
export interface PostMessageTarget {
  postMessage(message: PostMessageEnvelope, targetOrigin: string): void;
}

/** A `message` event, as far as the transport reads it. */
export interface MessageEventLike {
  readonly source: unknown;
  readonly origin: string;
  readonly data: unknown;
}

/** Where inbound `message` events are listened for (default: `globalThis`, the page's window). */
export interface MessageEventSourceLike {
  addEventListener(type: 'message', listener: (event: MessageEventLike) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEventLike) => void): void;
}

export interface PostMessageTransportOptions {
  /** Messages go to `target.postMessage`; inbound ones are accepted only when `event.source === target` (and the browser delivered them). */
  target: PostMessageTarget;
  /** The exact origin of the target, `scheme://host[:port]`; `'*'` is rejected. */
  targetOrigin: string;
  /** Exact serialized origins accepted inbound; `'*'` and `'null'` are rejected. */
  allowedOrigins: readonly string[];
  /** Where `message` events are listened for; default `globalThis`. */
  source?: MessageEventSourceLike | undefined;
}

/** Iframes and extensions: every message travels as `{ toolmark: 1, message }`. */
export declare function postMessageTransport(options: PostMessageTransportOptions): PostMessageTransport;

/** What `postMessageTransport` returns (its methods need it as `this`). */
export interface PostMessageTransport extends BridgeTransport {
  /** Posts the envelope to the target; throws once closed or once the target window closed. */
  send(message: unknown): void;
  onMessage(callback: (message: unknown) => void): () => void;
  /** Stops sending and accepting; removes every listener. */
  close(): void;
  /**
   * `open` until `close()` or until the target window is found closed (before each send,
   * and every second while an `onStatus` callback is subscribed): then `closed`, terminal.
   */
  readonly status: TransportStatus;
  onStatus(callback: (status: TransportStatus) => void): () => void;
}

export {};
