// Type declarations of `@toolmark/bridge-wasm/bridge/echo`.
import type { BridgeTransport } from './index.js';

type GlobalInstance<K extends string, Fallback> =
  typeof globalThis extends { readonly [P in K]: { readonly prototype: infer T } } ? T : Fallback;

/** A channel of Laravel Echo (`echo.private(name)`), as far as the transport uses it. */
export interface EchoChannelLike {
  listen(event: string, callback: (payload: any) => void): unknown;
  stopListening(event: string, callback?: (payload: any) => void): unknown;
}

/** A Laravel Echo instance, as far as the transport uses it. */
export interface EchoLike {
  private(channel: string): EchoChannelLike;
  leaveChannel?(channel: string): void;
  leave?(channel: string): void;
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
export declare function echoTransport(options: EchoTransportOptions): BridgeTransport & { close(): void };

export {};
