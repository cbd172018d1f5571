export declare const PROTOCOL_VERSION: 1;

export type Id = string;

export interface Issue { path: string; message: string }
export interface FieldChange { path: string; before?: unknown; after?: unknown }

export type RefusedCode =
  | 'unknown_tool' | 'stale' | 'not_allowed' | 'busy' | 'undo_unavailable' | 'confirmation_expired';

export type ToolResult =
  | { status: 'ok'; data?: unknown }
  | { status: 'invalid'; issues: Issue[] }
  | { status: 'refused'; code: RefusedCode; message: string; rev?: number }
  | { status: 'needs_confirmation'; confirmId: Id; summary: string; changes?: FieldChange[] }
  | { status: 'cancelled'; by: 'operator' | 'signal' | 'policy' }
  | { status: 'error'; message: string };

export interface ToolHints {
  readOnly?: boolean;
  consequential?: boolean;
  destructive?: boolean;
  untrustedContent?: boolean;
  [hint: string]: unknown;
}

export interface ToolManifestSummary {
  name: string;
  llmName: string;
  title?: string;
  description: string;
  hints: ToolHints;
  mode?: 'stepwise';
  [key: string]: unknown;
}

export interface ToolManifest extends ToolManifestSummary {
  inputSchema: object | boolean;
  outputSchema?: object | boolean;
}

interface Envelope<T extends string> { protocol: 1; type: T; clientId: Id }

export interface ManifestMessage extends Envelope<'manifest'> { rev: number; tools: ToolManifestSummary[] }
export interface ChangedMessage extends Envelope<'changed'> { rev: number }
export interface ResultMessage extends Envelope<'result'> { id: Id; result: ToolResult }
export interface ConfirmedMessage extends Envelope<'confirmed'> { confirmId: Id; result: ToolResult }
export interface CallMessage extends Envelope<'call'> { id: Id; rev?: number; tool: string; input: unknown }
export interface DescribeMessage extends Envelope<'describe'> { id: Id; tool: string }
export interface CancelMessage extends Envelope<'cancel'> { id: Id }

export type PageToAgentMessage = ManifestMessage | ChangedMessage | ResultMessage | ConfirmedMessage;
export type AgentToPageMessage = CallMessage | DescribeMessage | CancelMessage;
export type ProtocolMessage = PageToAgentMessage | AgentToPageMessage;

export interface ValidationError { path: string; message: string }

export declare function validateMessage(value: unknown, direction: 'toPage'):
  { ok: true; message: AgentToPageMessage } | { ok: false; errors: ValidationError[] };
export declare function validateMessage(value: unknown, direction: 'toAgent'):
  { ok: true; message: PageToAgentMessage } | { ok: false; errors: ValidationError[] };

/** The published JSON Schemas (draft 2020-12), deeply frozen; the same objects as protocol/v1/*.json. */
export declare const protocolSchemas: {
  readonly pageToAgent: {
    readonly $schema: 'https://json-schema.org/draft/2020-12/schema';
    readonly $id: 'urn:toolmark:protocol:v1:page-to-agent';
    readonly [keyword: string]: unknown;
  };
  readonly agentToPage: {
    readonly $schema: 'https://json-schema.org/draft/2020-12/schema';
    readonly $id: 'urn:toolmark:protocol:v1:agent-to-page';
    readonly [keyword: string]: unknown;
  };
};
