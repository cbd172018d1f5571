// Type declarations of `@toolmark/bridge-wasm/webmcp`.
import type { AbortSignalLike, ToolmarkPlugin } from '../index.js';

export type { ToolmarkPlugin } from '../index.js';

/**
 * A WebMCP model context (`document.modelContext`, W3C WebMCP draft): what
 * the plugin uses of it.
 */
export interface ModelContext {
  registerTool(
    tool: {
      name: string;
      title?: string;
      description: string;
      inputSchema: object;
      annotations: {
        readOnlyHint: boolean;
        untrustedContentHint: boolean;
        /** True for a consequential or destructive tool: it waits for a human (WebMCP draft). */
        consequentialHint: boolean;
      };
      execute(input: unknown, options?: { signal?: AbortSignalLike }): Promise<unknown>;
    },
    options: { signal: AbortSignalLike },
  ): unknown;
}

export interface WebMcpOptions {
  /** Default: `document.modelContext`, else `navigator.modelContext`; none: nothing is attached. */
  modelContext?: ModelContext | undefined;
}

/**
 * Offers every tool visible to caller `inapp` to WebMCP browser agents,
 * attached with `tm.use(webmcp())`. A browser agent's `execute` goes
 * through the core like a bridge call (lanes, busy limit, validation,
 * policy, its `signal` cancelling); a tool that needs a human waits for the
 * decision in the pending list and resolves with the outcome. It resolves
 * with the call's `ToolResult`, wrapped as `{ untrustedContent: true, note,
 * result }` for a tool marked `untrustedContent`. A registration the model
 * context rejects is an `error` event (`transport_failed`).
 */
export declare function webmcp(options?: WebMcpOptions): ToolmarkPlugin;

export {};
