// Type declarations of `@toolmark/bridge-wasm/bridge/echo`.
import type { BridgeTransport, TransportStatus } from './index.js';

type GlobalInstance<K extends string, Fallback> =
  typeof globalThis extends { readonly [P in K]: { readonly prototype: infer T } } ? T : Fallback;

/** A channel of Laravel Echo (`echo.private(name)`), as far as the transport uses it. */
export interface EchoChannelLike {
  listen(event: string, callback: (payload: any) => void): unknown;
  stopListening(event: string, callback?: (payload: any) => void): unknown;
  /** Told as `open` (Laravel Echo's channels have it). */
  subscribed?(callback: () => void): unknown;
  /** A refused subscription, told as `closed` with its `status` as the code. */
  error?(callback: (error: any) => void): unknown;
}

/** A Laravel Echo instance, as far as the transport uses it. */
export interface EchoLike {
  private(channel: string): EchoChannelLike;
  leaveChannel?(channel: string): void;
  leave?(channel: string): void;
  /** Laravel Echo 2: read once at construction. */
  connectionStatus?(): string;
  /**
   * Laravel Echo 2: its connection's changes, told as `closed` and `connecting`; `channels`:
   * the channels joined (one the app joined first is never left by `close()`).
   */
  connector?:
    | {
        onConnectionChange?(callback: (status: string) => void): () => void;
        channels?: Record<string, unknown>;
      }
    | undefined;
}

/** The request the transport makes for each outgoing message. */
export interface EchoPostInit {
  method: 'POST';
  credentials: 'same-origin';
  redirect: 'error';
  headers: Record<string, string>;
  body: string;
}

/** A `fetch` function, as far as the transport uses it. */
export type EchoFetch = (url: string, init: EchoPostInit) => Promise<{ readonly ok: boolean; readonly status: number }>;

export interface EchoTransportOptions {
  /** Your Laravel Echo instance. */
  echo: EchoLike;
  /** Private channel name, joined with `echo.private(channel)`, e.g. `toolmark.${userId}.${conversationId}`. */
  channel: string;
  /** The broadcast event; default `'.toolmark.message'`. */
  event?: string | undefined;
  /** Where outgoing messages are POSTed; MUST be same-origin. Default `'/toolmark/bridge'`. */
  postUrl?: string | GlobalInstance<'URL', never> | undefined;
  /** Read on every send; MUST supply Laravel's CSRF header (`X-XSRF-TOKEN`). */
  headers?: (() => Record<string, string>) | undefined;
  /** The fetch to use; default the global `fetch`. */
  fetch?: EchoFetch | undefined;
}

/**
 * Laravel Echo in (private channels only), HTTP POST out. `send` rejects on a
 * network failure or a non-2xx status (the bridge reports `transport_failed`).
 */
export declare function echoTransport(options: EchoTransportOptions): EchoTransport;

/** What `echoTransport` returns (its methods need it as `this`). */
export interface EchoTransport extends BridgeTransport {
  /** POSTs `message` as JSON; rejects on a network failure, a non-2xx status, and once closed. */
  send(message: unknown): Promise<void>;
  onMessage(callback: (message: unknown) => void): () => void;
  /**
   * Stops listening, ends sending, and leaves the channel when this is the last transport
   * holding it and the app had not joined it first.
   */
  close(): void;
  /**
   * `connecting` (attempt n) until the private channel is subscribed, then `open`;
   * `closed` when Echo loses its connection (`connecting` again when it retries) or the
   * subscription is refused (`code`: the HTTP status); terminal after `close()`.
   */
  readonly status: TransportStatus;
  onStatus(callback: (status: TransportStatus) => void): () => void;
}

export {};
