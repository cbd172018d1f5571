// Type declarations of `@toolmark/bridge-wasm/react` (React is an optional
// peer dependency; these declarations need no React types).
import type { PendingConfirmation, Toolmark } from '../index.js';
import type { ToolResult } from '../protocol/index.js';

export interface PendingConfirmationsState {
  /** The live list of deferred confirmations (a stable array between changes). */
  readonly pending: readonly PendingConfirmation[];
  /** Approves: the tool runs as caller `human`; resolves with the final result. */
  approve(confirmId: string): Promise<ToolResult>;
  /** Rejects: the final result is `cancelled` by `operator`. */
  reject(confirmId: string): Promise<ToolResult>;
}

/** The pending deferred confirmations of a registry, re-rendering on every change. */
export declare function usePendingConfirmations(
  tm: Pick<Toolmark, 'pendingConfirmations' | 'subscribePending' | 'confirmPending'>,
): PendingConfirmationsState;

export {};
