// Type declarations of `@toolmark/bridge-wasm` (the root entry point).
// The public contract is API.md; the protocol types live in ./protocol.
import type { FieldChange, ToolManifestSummary, ToolResult } from './protocol/index.js';

export type { FieldChange, Issue, RefusedCode, ToolHints, ToolManifest, ToolManifestSummary, ToolResult } from './protocol/index.js';

// ---------------------------------------------------------------------------
// Environment types that exist only with the DOM lib (or @types/node): taken
// from the consumer's globals when present, else a structural stand-in, so
// these declarations also compile in a project without `lib: ["dom"]`.

type GlobalInstance<K extends string, Fallback> =
  typeof globalThis extends { readonly [P in K]: { readonly prototype: infer T } } ? T : Fallback;

/** The consumer's `AbortSignal` (DOM or Node types), or its essentials. */
export type AbortSignalLike = GlobalInstance<'AbortSignal', {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}>;

/** What `formTools` reads of a form when the DOM lib is absent. */
export interface FormElementLike {
  readonly elements: ArrayLike<unknown>;
  readonly name: string;
  readonly id: string;
  getAttribute(name: string): string | null;
  requestSubmit(): void;
}

/** The consumer's `HTMLFormElement` (DOM lib), or what formTools needs of one. */
export type FormElement = GlobalInstance<'HTMLFormElement', FormElementLike>;

// ---------------------------------------------------------------------------
// Standard Schema (https://standardschema.dev), declared here so that the
// package has no dependency: zod, valibot, arktype… schemas are assignable.

/** The Standard Typed interface: the common base of Standard Schema and Standard JSON Schema. */
export interface StandardTypedV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardTypedV1.Props<Input, Output>;
}

export declare namespace StandardTypedV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: Types<Input, Output> | undefined;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  type InferInput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['input'];
  type InferOutput<Schema extends StandardTypedV1> = NonNullable<Schema['~standard']['types']>['output'];
}

/** The Standard Schema interface (v1): a validator with inferable input and output types. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly validate: (
      value: unknown,
      options?: StandardSchemaV1.Options | undefined,
    ) => Result<Output> | Promise<Result<Output>>;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  interface Types<Input = unknown, Output = Input> extends StandardTypedV1.Types<Input, Output> {}
  type InferInput<Schema extends StandardTypedV1> = StandardTypedV1.InferInput<Schema>;
  type InferOutput<Schema extends StandardTypedV1> = StandardTypedV1.InferOutput<Schema>;
}

/**
 * The Standard JSON Schema interface (v1). A Standard Schema that also has
 * `~standard.jsonSchema` (zod ≥ 4.2; valibot through `toStandardJsonSchema`
 * of `@valibot/to-json-schema`) gives the manifest its JSON Schema; without it
 * the tool is registered with `inputSchema: {}` and a `schema_conversion_failed`
 * error event (a ToolmarkError in dev mode).
 */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>;
}

export declare namespace StandardJSONSchemaV1 {
  interface Props<Input = unknown, Output = Input> extends StandardTypedV1.Props<Input, Output> {
    readonly jsonSchema: Converter;
  }
  interface Converter {
    readonly input: (options: StandardJSONSchemaV1.Options) => Record<string, unknown>;
    readonly output: (options: StandardJSONSchemaV1.Options) => Record<string, unknown>;
  }
  type Target = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);
  interface Options {
    readonly target: Target;
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
  type InferInput<Schema extends StandardTypedV1> = StandardTypedV1.InferInput<Schema>;
  type InferOutput<Schema extends StandardTypedV1> = StandardTypedV1.InferOutput<Schema>;
}

// ---------------------------------------------------------------------------
// Schemas and tool definitions

/** A JSON Schema (draft 2020-12) object; validated in Rust. */
export interface JSONSchemaObject {
  readonly [keyword: string]: unknown;
}

/** A JSON Schema (draft 2020-12): an object or a boolean schema. */
export type JSONSchema = JSONSchemaObject | boolean;

/** What a tool's `inputSchema` / `outputSchema` may be. */
export type ToolSchema = JSONSchema | StandardSchemaV1;

/**
 * The input `run` (and summary/changes/snapshot) receives: a Standard Schema's
 * output type (after its transforms and coercions), else `Fallback`. With a
 * Standard Schema, `run` gets the value that schema's `validate` returned, as it
 * is (a `Date` stays a `Date`); with a JSON Schema or none, a JSON copy of the
 * input the core validated.
 */
export type ToolInput<S, Fallback = unknown> = S extends StandardSchemaV1<any, infer Output> ? Output : Fallback;

/** What `run` must return: a Standard output schema's input type, else anything JSON-safe. */
export type ToolOutput<S> = S extends StandardSchemaV1<infer Input, any> ? Input : unknown;

/** Who calls a tool: the user in the page, or the agent (through the bridge). */
export type Caller = 'human' | 'inapp';

/**
 * Hints of a tool definition: the four the protocol names, so a misspelt one
 * is a type error. Other boolean hints are passed on in the manifest as
 * they are (the protocol keeps unknown hints for forward compatibility).
 */
export interface ToolDefinitionHints {
  /** The tool only reads. */
  readOnly?: boolean | undefined;
  /** The tool has consequences: the agent's calls need a human's approval. */
  consequential?: boolean | undefined;
  /** The tool destroys data: the agent's calls need a human's approval. */
  destructive?: boolean | undefined;
  /** The result carries page or user content (a prompt-injection surface). */
  untrustedContent?: boolean | undefined;
}

/** Second argument of `run`. */
export interface ToolContext {
  /** Aborted when the call is cancelled (cancel message, `signal` of tm.call, bridge disposed). */
  readonly signal: AbortSignalLike;
  readonly caller: Caller;
  /** The id of this call; `tm.undo(callId)` runs the restorer `snapshot` returned. */
  readonly callId: string;
  /**
   * Inline confirmation through the `onConfirm` option: only for caller
   * `human` with an `onConfirm` handler; otherwise resolves `false` and emits
   * `ctx_confirm_unavailable`. Once the call is cancelled (`signal`
   * aborted) it asks nobody and resolves `false`, as does an approval given
   * after the cancel.
   */
  confirm(message?: string): Promise<boolean>;
  readonly files: {
    /** File support lands in M2: always throws ToolmarkError('files_not_configured'). */
    resolve(...args: unknown[]): never;
  };
}

/** Puts back what a call changed (returned by `snapshot`, run by `tm.undo(callId)`). */
export type Restorer = () => void | Promise<void>;

/** `run`'s input type when nothing chooses it: `any` with a JSON Schema, `unknown` without a schema. */
type DefaultInput<S> = [S] extends [undefined] ? unknown : any;

/**
 * A tool definition for `tm.register` / `scope.register`.
 *
 * `S` is the input schema: with a Standard Schema, `run` gets its output type;
 * otherwise `run` gets `I`: with a JSON Schema, the JSON that schema accepted,
 * typed `any` by default (TypeScript does not read JSON Schemas); without a
 * schema, `unknown` by default. Annotate `run`'s parameter to choose it. `O`
 * is the output schema: with a Standard Schema, `run` must return its input
 * type.
 */
export interface ToolDefinition<
  S extends ToolSchema | undefined = ToolSchema | undefined,
  I = DefaultInput<S>,
  O extends ToolSchema | undefined = ToolSchema | undefined,
> {
  /** `^[A-Za-z0-9_.-]{1,128}$` once joined with the scope's prefix. */
  name: string;
  /** App-localized, user-facing. */
  title?: string | undefined;
  /** LLM-facing; from code only. */
  description: string;
  /** JSON Schema 2020-12 (validated in Rust) or a Standard Schema (validated by its own `validate`). */
  inputSchema?: S;
  outputSchema?: O;
  hints?: ToolDefinitionHints | undefined;
  mode?: 'stepwise' | undefined;
  /** Input paths reported as "[redacted]" in FieldChange. */
  sensitive?: readonly string[] | undefined;
  /** The text of `needs_confirmation` (synchronous). */
  summary?: ((input: ToolInput<S, I>) => string) | undefined;
  /** The `changes` of `needs_confirmation` (synchronous). */
  changes?: ((input: ToolInput<S, I>) => FieldChange[]) | undefined;
  /** Runs before `run`; the restorer it returns is kept for `tm.undo(callId)`. */
  snapshot?: ((input: ToolInput<S, I>) => Restorer | undefined | Promise<Restorer | undefined>) | undefined;
  run: (input: ToolInput<S, I>, ctx: ToolContext) => ToolOutput<O> | Promise<ToolOutput<O>>;
}

/** Registers tools; returns the function that unregisters the tool. */
export interface ToolRegistrar {
  register<
    S extends ToolSchema | undefined = undefined,
    I = DefaultInput<S>,
    O extends ToolSchema | undefined = undefined,
  >(definition: ToolDefinition<S, I, O>): () => void;
}

/** `tm.scope(name)`: registers `<name>.<tool>`; disposing it unregisters everything in it. */
export interface ToolScope extends ToolRegistrar {
  /** A nested scope: `<this name>.<name>`. */
  scope(name: string): ToolScope;
  /** Unregisters every tool of this scope and its nested scopes; later registrations are `scope_disposed`. */
  dispose(): void;
  /** The full dotted prefix, e.g. `signup` or `signup.address`. */
  readonly name: string;
}

// ---------------------------------------------------------------------------
// Registry

/** Codes of page-side `error` events (thrown as ToolmarkError in dev mode). */
export type ErrorEventCode =
  | 'duplicate_name'
  | 'invalid_name'
  | 'invalid_scope'
  | 'missing_confirm_handler'
  | 'schema_conversion_failed'
  | 'tool_threw'
  | 'output_invalid'
  | 'transport_failed'
  | 'tool_budget_exceeded'
  | 'ctx_confirm_unavailable'
  | 'invalid_confirm_mode'
  | 'invalid_policy'
  | 'late_result'
  | 'invalid_message'
  | 'scope_disposed';

/**
 * Codes that are only thrown or rejected, never events. Every error the package
 * throws or rejects with is a `ToolmarkError` with a code (an error of the page's
 * own code, such as a tool's, passes through as it is).
 */
export type ThrownErrorCode =
  | 'invalid_path'
  | 'files_not_configured'
  /** An argument or option of the wrong type or value. */
  | 'invalid_argument'
  /** A transport used after it stopped (close(), a terminal close, a rejecting onOpen, a target window gone). */
  | 'transport_closed'
  /** The host lacks what is needed: a WebSocket, fetch, Web Crypto. */
  | 'host_unsupported'
  /** The package's WebAssembly module could not be fetched, compiled or instantiated (e.g. a CSP refusal). */
  | 'module_unavailable'
  /** The registry was called back while it was updating itself. */
  | 'reentrant_call'
  /** A plugin used after its registry was freed. */
  | 'registry_gone'
  /** The in-page agent's request got no answer within timeoutMs. */
  | 'timeout'
  /** The in-page agent already has 100 requests waiting for the page's first manifest. */
  | 'queue_full'
  /** The /slim entry used before initialize() resolved. */
  | 'not_initialized';

export type ToolmarkErrorCode = ErrorEventCode | ThrownErrorCode;

/**
 * A transport's connection state (`transport.status`, `transport.onStatus`,
 * `tm.events.on('status')`).
 */
export type TransportStatus =
  /** An attempt is under way: tries since the start or the last open connection, this one included. */
  | { readonly state: 'connecting'; readonly attempt: number }
  /** Connected: messages go out at once. */
  | { readonly state: 'open' }
  /** Waiting to try again: the next try's number and, when the transport knows, the wait in ms. */
  | { readonly state: 'reconnecting'; readonly attempt: number; readonly delayMs?: number }
  /**
   * The connection (or an attempt) ended: the close code when there is one, the reason
   * (`''` when none); `terminal`: the transport will not connect again by itself.
   */
  | { readonly state: 'closed'; readonly code?: number; readonly reason: string; readonly terminal: boolean };

/** An `error` event (`tm.events.on('error')`, `onError`). */
export interface ToolmarkErrorEvent {
  code: ErrorEventCode;
  message: string;
  /** The full tool name, when the event is about one tool. */
  tool?: string;
}

/** What a policy decides for a hint class: run, confirm by a human, refuse, or hide. */
export type PolicyDecision = 'allow' | 'confirm' | 'deny' | 'hide';

/**
 * The agent's (`inapp`) policy per hint class; the strictest class of a tool
 * wins. Consequential and destructive tools default to `'confirm'` and can only
 * be made stricter (`'allow'` there is `invalid_policy`).
 */
export interface InappPolicy {
  readOnly?: PolicyDecision | undefined;
  consequential?: 'confirm' | 'deny' | 'hide' | undefined;
  destructive?: 'confirm' | 'deny' | 'hide' | undefined;
  untrustedContent?: PolicyDecision | undefined;
  /** Tools that are neither read-only, consequential nor destructive. */
  default?: PolicyDecision | undefined;
}

export interface ToolmarkPolicy {
  inapp?: InappPolicy | undefined;
  /** Caller `human` runs every tool directly: it takes no entries. */
  human?: { readonly [hintClass: string]: never } | undefined;
}

export interface ToolmarkOptions {
  /** Misconfiguration throws ToolmarkError instead of emitting an `error` event. */
  dev?: boolean | undefined;
  /** Visible tools before `tool_budget_exceeded` (dev only); default 40. */
  toolBudget?: number | undefined;
  /** Lifetime of a deferred confirmation; default 600000 ms. */
  confirmExpiryMs?: number | undefined;
  /** How long an aborted run may take to settle before the call is abandoned (`late_result`). */
  abortGraceMs?: number | undefined;
  /** Clock in ms; default `Date.now`. */
  now?: (() => number) | undefined;
  onError?: ((event: ToolmarkErrorEvent) => void) | undefined;
  policy?: ToolmarkPolicy | undefined;
  /** How the agent's calls to tools that need confirmation are confirmed (default `'deferred'`). */
  confirmMode?: { inapp?: 'deferred' | 'none' | undefined } | undefined;
  /** Inline confirmation for caller `human` (`ctx.confirm`). */
  onConfirm?: ((request: { tool: string; message: string }) => boolean | Promise<boolean>) | undefined;
}

export interface CallOptions {
  /** Who calls; default `'human'` (the user in the page). */
  caller?: Caller | undefined;
  /** Aborting it cancels the call (`cancelled` by `signal`); one aborted already runs nothing. */
  signal?: AbortSignalLike | undefined;
  /** The registry revision the caller saw (stale check): a whole number ≥ 0, else the call throws. */
  rev?: number | undefined;
}

/** A deferred confirmation waiting for a human. */
export interface PendingConfirmation {
  confirmId: string;
  /** Full tool name. */
  tool: string;
  summary: string;
  changes?: FieldChange[];
  /** Expiry time, in the registry's clock (ms). */
  expiresAt: number;
}

declare const pluginBrand: unique symbol;

/** What `tm.use` accepts: a plugin such as `bridge({ transport })`. */
export interface ToolmarkPlugin {
  readonly [pluginBrand]: true;
}

/** The registry `createToolmark` returns. */
export interface Toolmark extends ToolRegistrar {
  /** Registry revision, an integer ≥ 0, +1 on every change. */
  readonly rev: number;
  scope(name: string): ToolScope;
  /**
   * Calls a tool by its full name; never rejects: every outcome is a
   * ToolResult. An absent (`undefined`) input is `{}`, as the protocol
   * sends no input.
   */
  call(name: string, input?: unknown, options?: CallOptions): Promise<ToolResult>;
  /** Summary entries visible to that caller (default `'inapp'`). */
  manifest(caller?: Caller): ToolManifestSummary[];
  pendingConfirmations(): PendingConfirmation[];
  /**
   * The listener runs on every change of `pendingConfirmations()`; returns
   * unsubscribe. A listener here or in `events` that throws is reported as an
   * uncaught error (`reportError`; `console.error` in Node) and stops no other.
   */
  subscribePending(listener: () => void): () => void;
  /** Approves or rejects a deferred confirmation; resolves with the final result (also sent as `confirmed` when a bridge call asked for it). */
  confirmPending(confirmId: string, approve: boolean): Promise<ToolResult>;
  /** Runs the restorer of that call; `refused undo_unavailable` when there is none. */
  undo(callId: string): Promise<ToolResult>;
  readonly events: {
    on(event: 'error', listener: (event: ToolmarkErrorEvent) => void): () => void;
    /**
     * Each new connection state of an attached bridge's transport (one that has
     * `status`/`onStatus`, as every transport of this package): the state at
     * attach, then every change. An attempt that never opened is also an
     * `error` event `transport_failed`.
     */
    on(event: 'status', listener: (status: TransportStatus) => void): () => void;
  };
  /** Attaches a plugin (e.g. `bridge(...)`); returns its dispose function. */
  use(plugin: ToolmarkPlugin): () => void;
}

export declare function createToolmark(options?: ToolmarkOptions): Toolmark;

/** Misconfiguration thrown in dev mode, and the thrown-only codes. */
export declare class ToolmarkError extends Error {
  constructor(code: ToolmarkErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'ToolmarkError';
  readonly code: ToolmarkErrorCode;
}

// ---------------------------------------------------------------------------
// Helpers

/** An RFC 4122 version 4 UUID (lowercase) from `crypto.getRandomValues`. */
export declare function newId(): string;
/**
 * The LLM-facing name of a tool: `.` becomes `__`; a result longer than 64
 * characters keeps its first 55, then `_` and 8 hex digits of the FNV-1a hash
 * of the full name.
 */
export declare function llmName(name: string): string;

/** The value at a dotted path (`items.0.name`), or undefined. Throws ToolmarkError('invalid_path') for unsafe paths. */
export declare function getPath(value: unknown, path: string): unknown;
/** Sets the value at a dotted path, creating objects (arrays for array index segments: `0`, not `007`); returns `target`. */
export declare function setPath<T extends object>(target: T, path: string, value: unknown): T;
/** `{ "a.b": 1, "c.0": 2 }` from `{ a: { b: 1 }, c: [2] }`: leaves only, keys prefixed with `prefix`. */
export declare function flatten(value: unknown, prefix?: string): Record<string, unknown>;

export interface FormToolsOptions {
  /** The scope the tools go in: `<scope>.fill`, `<scope>.read`, `<scope>.submit`. */
  scope: ToolScope;
  /** Field names always reported as "[redacted]" (passwords and `cc-*` fields are anyway). */
  sensitive?: readonly string[] | undefined;
  /** Label used in the tools' titles and descriptions. */
  title?: string | undefined;
}

/**
 * Registers fill / read / submit tools for an HTML form (submit is
 * consequential, and is refused `stale` when the form changed since the
 * confirmation was requested). Returns the function that unregisters them.
 */
export declare function formTools(form: FormElement, options: FormToolsOptions): () => void;

export {};
