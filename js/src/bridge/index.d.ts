// Type declarations of `@toolmark/bridge-wasm/bridge`.
import type { ToolmarkPlugin, TransportStatus } from '../index.js';
import type { PageToAgentMessage } from '../protocol/index.js';

export type { ToolmarkPlugin, TransportStatus } from '../index.js';

/**
 * Carries protocol messages between the page and the server. Inbound
 * messages are handed to the bridge unvalidated (it bounds, copies, filters
 * and validates them itself).
 */
export interface BridgeTransport {
  /** Sends one page → agent message; a rejection (or throw) is reported as `transport_failed`. */
  send(message: PageToAgentMessage): void | Promise<void>;
  /** Registers the inbound listener; returns the function that removes it. */
  onMessage(callback: (message: unknown) => void): () => void;
  /** Called when the bridge is disposed. */
  close?(): void;
  /** The connection state now; read by the bridge when it attaches. */
  readonly status?: TransportStatus;
  /**
   * Calls `callback` with each new connection state; returns the function that
   * removes it. The bridge tells them as `tm.events.on('status')`.
   */
  onStatus?(callback: (status: TransportStatus) => void): () => void;
}

export interface BridgeOptions {
  transport: BridgeTransport;
  /** `'manifest'` (default): a full manifest on every revision; `'changed'`: only the new rev. */
  onChange?: 'manifest' | 'changed' | undefined;
  /** Only `'inapp'` in protocol v1 (the default); anything else throws. */
  caller?: 'inapp' | undefined;
  /** Largest inbound message, in UTF-8 bytes of its JSON; default 1048576. */
  maxMessageBytes?: number | undefined;
}

/**
 * The page side of the bridge, attached with `tm.use(bridge({ transport }))`;
 * disposing it (the function `use` returns) aborts its in-flight calls and
 * closes the transport.
 */
export declare function bridge(options: BridgeOptions): ToolmarkPlugin;

export {};
