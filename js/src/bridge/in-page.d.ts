// Type declarations of `@toolmark/bridge-wasm/bridge/in-page`.
import type { BridgeTransport, TransportStatus } from './index.js';
import type {
  ConfirmedMessage,
  PageToAgentMessage,
  ToolManifest,
  ToolManifestSummary,
  ToolResult,
} from '../protocol/index.js';

/** What `agent.describe` resolves with: the full manifest entry as ok data, or why not. */
export type DescribeResult =
  | { status: 'ok'; data: ToolManifest }
  | Exclude<ToolResult, { status: 'ok' }>;

export interface InPageCallOptions {
  /** The manifest revision the agent saw, a whole number >= 0 (default: none sent). */
  rev?: number | undefined;
  /**
   * Rejects with a `ToolmarkError` `timeout` and sends `cancel` when no
   * result arrives within this many ms (a finite number >= 0, any size;
   * another value rejects with `invalid_argument`).
   */
  timeoutMs?: number | undefined;
  /**
   * The call's id, a non-empty string no request still waiting for its
   * result has (default: a fresh `newId()`), e.g. to `cancel` it later.
   */
  id?: string | undefined;
}

/** The agent end of an in-page channel: what a client-side agent loop and tests drive. */
export interface InPageAgent {
  /** Delivers the value to the page as is, unvalidated. */
  send(message: unknown): void;
  /**
   * Every page → agent message (plain JSON, one object the listeners
   * share); returns unsubscribe. What `call` resolves with, `tools` and
   * `onConfirmed`'s message are copies of their own.
   */
  onMessage(callback: (message: PageToAgentMessage) => void): () => void;
  /** From the latest manifest (or `changed`); undefined before the first one. */
  readonly clientId: string | undefined;
  readonly rev: number | undefined;
  /** The tools of the latest manifest. */
  readonly tools: ToolManifestSummary[];
  /**
   * Sends a `call` (with `options.id`, or a fresh id) and resolves with its
   * result. An absent input is sent as `{}`; any other value, `null`
   * included, as it is. What the page would drop unanswered (an input JSON
   * cannot copy, a tool name or id that is no non-empty string, half a
   * surrogate pair in the tool name, id or input, a rev that is no whole
   * number >= 0) and an id in use reject at once with a
   * `ToolmarkError` `invalid_argument`, and nothing is sent. Once the page
   * end is closed (its `close()`, or its bridge detached) a call still
   * waiting, and one made then, rejects with `transport_closed`.
   */
  call(tool: string, input?: unknown, options?: InPageCallOptions): Promise<ToolResult>;
  /**
   * Sends a `describe` with a fresh id and resolves with its result. Like
   * `call`, rejects with a `ToolmarkError` `transport_closed` once the page
   * end is closed.
   */
  describe(tool: string, options?: { timeoutMs?: number | undefined }): Promise<DescribeResult>;
  /** Sends a `cancel` for that call id (never answered). */
  cancel(id: string): void;
  /**
   * Every `confirmed` message, before `onMessage`'s listeners; returns
   * unsubscribe. A throw is reported as uncaught and stops no other.
   */
  onConfirmed(callback: (message: ConfirmedMessage) => void): () => void;
}

export interface InPageChannel {
  /** The page end: `tm.use(bridge({ transport }))`. */
  transport: BridgeTransport & {
    /** Ends the page end: `send` throws, the agent's waiting requests reject with `transport_closed`. */
    close(): void;
    /** `open` until `close()`, then `closed` with `terminal: true`. */
    readonly status: TransportStatus;
    /** Calls `callback` with the `closed` state at `close()`; a throw is reported as uncaught and stops no other. */
    onStatus(callback: (status: TransportStatus) => void): () => void;
  };
  agent: InPageAgent;
}

/**
 * Both ends of a bridge in one JavaScript realm, for a client-side agent
 * loop or tests. Not a security boundary.
 */
export declare function createInPageChannel(): InPageChannel;

export {};
