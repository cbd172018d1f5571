// createToolmark: the page's registry. Every decision is the core's (Rust,
// in WebAssembly); this file calls tool functions, keeps timers and
// AbortControllers, and routes what the core hands back.
import { wasm } from './internal.js';
import { ToolmarkError, fromCoreError } from './errors.js';
import { NOT_JSON, copyText, resultText } from './json.js';

/** Private access from plugins (bridge) and helpers (formTools) to a registry. */
export const INTERNALS = Symbol.for('toolmark.bridge-wasm.internals');
/** A tool-definition hook formTools uses: the form state compared at approval. */
export const STATE = Symbol.for('toolmark.bridge-wasm.state');

const ROOT = 0;

// The core's operations, numbered as `dispatch` in src/wasm/core.rs matches them (its `ops`).
const OP_REV = 0;
const OP_REGISTER = 1;
const OP_UNREGISTER = 2;
const OP_CREATE_SCOPE = 3;
const OP_DISPOSE_SCOPE = 4;
const OP_ATTACH = 5;
const OP_DETACH = 6;
const OP_CALL = 7;
const OP_ABORT = 8;
const OP_CONFIRM = 9;
const OP_UNDO = 10;
const OP_CTX_CONFIRM = 11;
const OP_HANDLE_VALIDATED = 12;
const OP_HANDLE_PREPARED = 13;
const OP_HANDLE_STATE = 14;
const OP_HANDLE_RESTORED = 15;
const OP_HANDLE_TIMEOUT = 16;
const OP_MANIFEST = 17;
const OP_PENDING_CONFIRMATIONS = 18;
const OP_DRAIN = 19;

function isStandardSchema(schema) {
  return schema != null && typeof schema === 'object' && typeof schema['~standard'] === 'object';
}

function standardJsonSchema(schema, io) {
  const standard = schema['~standard'];
  try {
    if (standard.jsonSchema && typeof standard.jsonSchema[io] === 'function') {
      return standard.jsonSchema[io]({ target: 'draft-2020-12' });
    }
    if (typeof schema.toJSONSchema === 'function') return schema.toJSONSchema({ io, target: 'draft-2020-12' });
  } catch {
    return undefined;
  }
  return undefined;
}

function schemaSpec(schema, io = 'input') {
  if (schema === undefined || schema === null) return undefined;
  if (isStandardSchema(schema)) {
    const json = standardJsonSchema(schema, io);
    return { kind: 'external', schema: json === undefined ? null : JSON.parse(JSON.stringify(json)) };
  }
  return { kind: 'json', schema };
}

function issuePath(path) {
  if (!Array.isArray(path)) return '';
  return path.map((segment) => (segment && typeof segment === 'object' ? segment.key : segment)).map(String).join('.');
}

function detail(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * @param {object} [options]
 * @param {boolean} [options.dev]
 * @param {number} [options.toolBudget]
 * @param {number} [options.confirmExpiryMs]
 * @param {number} [options.abortGraceMs]
 * @param {() => number} [options.now]
 * @param {(e: {code: string, message: string, tool?: string}) => void} [options.onError]
 * @param {object} [options.policy]
 * @param {object} [options.confirmMode]
 * @param {(request: {tool: string, message: string}) => boolean | Promise<boolean>} [options.onConfirm]
 */
export function createToolmark(options = {}) {
  const now = typeof options.now === 'function' ? () => Number(options.now()) : () => Date.now();
  const errorListeners = new Set();
  if (typeof options.onError === 'function') errorListeners.add(options.onError);
  const pendingListeners = new Set();
  const completions = new Map(); // handle → resolve
  const tools = new Map(); // tool key → definition (the app's functions)
  const runs = new Map(); // run id → AbortController
  // Restorers by the run that took the snapshot (unique per page; runs can share a call id).
  const restorers = new Map(); // run id → restorer
  const snapshotting = new Set(); // runs whose snapshot() has not resolved yet
  // A Standard Schema's validated values, by validation run, until the run they are for starts
  // (the core names them in `run`/`prepare` actions and says `forgetValidated` otherwise).
  const validatedValues = new Map(); // validation run id → value
  const bridges = new Map(); // bridge id → { transport, off }
  let timer;
  let draining = false;
  let again = false;

  let core;
  try {
    core = new wasm.WasmToolmark(
      JSON.stringify({
        dev: Boolean(options.dev),
        toolBudget: options.toolBudget,
        confirmExpiryMs: options.confirmExpiryMs,
        abortGraceMs: options.abortGraceMs,
        policy: options.policy ?? null,
        confirmMode: options.confirmMode ?? null,
        inlineConfirm: typeof options.onConfirm === 'function',
      }),
    );
  } catch (error) {
    throw fromCoreError(error);
  }
  /** Calls the core through its one multiplexed export (`code`: an OP_*); returns the parsed result. */
  const op = (code, ...args) => JSON.parse(core.dispatch(code, JSON.stringify(args)));

  function emitError(event) {
    const copy = { code: event.code, message: event.message };
    if (event.tool) copy.tool = event.tool;
    for (const listener of [...errorListeners]) {
      try {
        listener(copy);
      } catch {
        // A listener's failure must not break the bridge.
      }
    }
  }

  function schedule(deadline) {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (deadline === null || deadline === undefined) return;
    const delay = Math.max(0, Math.min(deadline - now(), 2 ** 31 - 1));
    timer = setTimeout(() => {
      timer = undefined;
      op(OP_HANDLE_TIMEOUT, now());
      drain();
    }, delay);
    // Never keep a Node process alive for an expiry alone.
    if (timer && typeof timer.unref === 'function') timer.unref();
  }

  /** Hands everything the core produced to its destination (documented drain order). */
  function drain() {
    if (draining) {
      again = true;
      return;
    }
    draining = true;
    try {
      do {
        again = false;
        const out = op(OP_DRAIN);
        for (const [bridge, text] of out.transmits) transmit(bridge, text);
        for (const event of out.events) dispatchEvent(event);
        for (const action of out.actions) perform(action);
        schedule(out.timeout);
      } while (again);
    } finally {
      draining = false;
    }
  }

  function transmit(bridgeId, text) {
    const entry = bridges.get(bridgeId);
    if (!entry) return;
    const report = (error) =>
      emitError({ code: 'transport_failed', message: `transport.send failed: ${detail(error)}` });
    try {
      const sent = entry.transport.send(JSON.parse(text));
      if (sent && typeof sent.then === 'function') sent.then(undefined, report);
    } catch (error) {
      report(error);
    }
  }

  function dispatchEvent(event) {
    switch (event.kind) {
      case 'error':
        emitError(event);
        break;
      case 'completed': {
        const resolve = completions.get(event.handle);
        completions.delete(event.handle);
        if (resolve) resolve(event.result);
        break;
      }
      case 'pending':
        for (const listener of [...pendingListeners]) {
          try {
            listener();
          } catch {
            // ignore
          }
        }
        break;
      default:
        break;
    }
  }

  function finishRun(run, kind, text) {
    runs.delete(run);
    core.handleOutcome(run, kind, text, now());
    drain();
  }

  function perform(action) {
    switch (action.kind) {
      case 'run':
        startRun(action);
        break;
      case 'validate':
        validate(action);
        break;
      case 'prepare':
        prepare(action);
        break;
      case 'readState':
        readState(action);
        break;
      case 'abort': {
        const controller = runs.get(action.run);
        if (controller) controller.abort();
        break;
      }
      case 'restore':
        restore(action);
        break;
      case 'forgetValidated':
        validatedValues.delete(action.run);
        break;
      case 'dropRestorer':
        restorers.delete(action.run);
        // Dropped before its snapshot resolved: it must not be stored afterwards.
        snapshotting.delete(action.run);
        break;
      case 'close': {
        const entry = bridges.get(action.bridge);
        bridges.delete(action.bridge);
        if (entry) {
          try {
            entry.off();
            if (typeof entry.transport.close === 'function') entry.transport.close();
          } catch (error) {
            emitError({ code: 'transport_failed', message: `transport.close failed: ${detail(error)}` });
          }
        }
        break;
      }
      default:
        break;
    }
  }

  function startRun(action) {
    const def = tools.get(action.tool);
    const controller = new AbortController();
    runs.set(action.run, controller);
    if (!def) {
      finishRun(action.run, 'threw', 'tool definition missing');
      return;
    }
    // The validated value itself when JS kept one (a Date stays a Date), else the core's JSON.
    let input;
    if (action.validated !== undefined && validatedValues.has(action.validated)) {
      input = validatedValues.get(action.validated);
      validatedValues.delete(action.validated);
    } else {
      input = JSON.parse(action.input);
    }
    const ctx = {
      signal: controller.signal,
      caller: action.caller,
      callId: action.callId,
      confirm: (message) => ctxConfirm(action.run, def, message),
      files: {
        resolve() {
          throw new ToolmarkError('files_not_configured', 'ctx.files.resolve: file support lands in M2');
        },
      },
    };
    Promise.resolve()
      .then(() => {
        if (action.snapshot && typeof def.snapshot === 'function') {
          snapshotting.add(action.run);
          return Promise.resolve(def.snapshot(input)).then((restorer) => {
            const wanted = snapshotting.delete(action.run);
            if (wanted && typeof restorer === 'function') restorers.set(action.run, restorer);
          });
        }
        return undefined;
      })
      .then(() => def.run(input, ctx))
      .then((value) => checkOutput(def, value))
      .then(
        (value) => {
          const { text, reason } = resultText(value);
          if (text === NOT_JSON) finishRun(action.run, 'notSerializable', reason);
          else finishRun(action.run, 'ok', text);
        },
        (error) => {
          if (controller.signal.aborted) finishRun(action.run, 'aborted', undefined);
          else finishRun(action.run, 'threw', detail(error));
        },
      );
  }

  /** Dev only: a Standard Schema outputSchema checks the tool's value (the core checks JSON Schema ones). */
  function checkOutput(def, value) {
    if (!options.dev || !isStandardSchema(def.outputSchema)) return value;
    const report = (text) =>
      emitError({ code: 'output_invalid', tool: def.fullName, message: `output of '${def.fullName}' fails its output schema${text}` });
    return Promise.resolve()
      .then(() => def.outputSchema['~standard'].validate(value))
      .then(
        (result) => {
          if (result && Array.isArray(result.issues) && result.issues.length > 0) {
            const first = result.issues[0];
            report(` at '${issuePath(first.path)}': ${String(first.message)}`);
          }
        },
        (error) => report(`: its validator threw (${detail(error)})`),
      )
      .then(() => value);
  }

  async function ctxConfirm(run, def, message) {
    if (!op(OP_CTX_CONFIRM, run)) {
      drain();
      return false;
    }
    return Boolean(await options.onConfirm({ tool: def.fullName, message: String(message ?? '') }));
  }

  function validate(action) {
    const def = tools.get(action.tool);
    const answer = (kind, text) => {
      op(OP_HANDLE_VALIDATED, action.run, kind, text, now());
      drain();
    };
    Promise.resolve()
      .then(() => def.inputSchema['~standard'].validate(JSON.parse(action.input)))
      .then(
        (result) => {
          if (result && Array.isArray(result.issues)) {
            const issues = result.issues.map((issue) => ({
              path: issuePath(issue.path),
              message: String(issue.message),
            }));
            answer('invalid', JSON.stringify(issues));
          } else {
            // The validated value replaces the input; one that is not JSON-safe must not fall back to the raw input.
            const value = result ? result.value : undefined;
            const { text, reason } = resultText(value);
            if (text === NOT_JSON) answer('threw', `validated input is not JSON-safe: ${reason}`);
            else {
              // Kept for the run (the core has its JSON copy); the core names or forgets it.
              if (text !== undefined) validatedValues.set(action.run, value);
              answer('valid', text);
            }
          }
        },
        (error) => answer('threw', detail(error)),
      );
  }

  function prepare(action) {
    const def = tools.get(action.tool);
    const input =
      action.validated !== undefined && validatedValues.has(action.validated)
        ? validatedValues.get(action.validated)
        : JSON.parse(action.input);
    let prepared;
    try {
      prepared = {
        summary: action.summary ? def.summary(input) : undefined,
        changes: action.changes ? def.changes(input) : undefined,
        state: action.state ? def[STATE](input) : undefined,
      };
    } catch (error) {
      op(OP_HANDLE_PREPARED, action.run, undefined, detail(error), now());
      drain();
      return;
    }
    const text = copyText(prepared);
    if (text === undefined) op(OP_HANDLE_PREPARED, action.run, undefined, 'summary/changes are not JSON', now());
    else op(OP_HANDLE_PREPARED, action.run, text, undefined, now());
    drain();
  }

  function readState(action) {
    const def = tools.get(action.tool);
    try {
      const state = def[STATE](JSON.parse(action.input));
      op(OP_HANDLE_STATE, action.run, state === undefined ? undefined : String(state), undefined, now());
    } catch (error) {
      op(OP_HANDLE_STATE, action.run, undefined, detail(error), now());
    }
    drain();
  }

  function restore(action) {
    const restorer = restorers.get(action.restorer);
    restorers.delete(action.restorer);
    Promise.resolve()
      .then(() => {
        if (typeof restorer !== 'function') throw new Error('restorer missing');
        return restorer();
      })
      .then(
        () => op(OP_HANDLE_RESTORED, action.run, undefined),
        (error) => op(OP_HANDLE_RESTORED, action.run, detail(error)),
      )
      .then(drain);
  }

  /** Result of a core registry command: throws in dev, undefined when rejected. */
  function outcome(parsed) {
    drain();
    if (parsed.error) throw new ToolmarkError(parsed.error.code, parsed.error.message);
    return parsed;
  }

  function registerIn(scopeId, prefix, def, scopeKeys) {
    if (def === null || typeof def !== 'object') throw new TypeError('register: a tool definition object is required');
    if (typeof def.run !== 'function') throw new TypeError('register: run must be a function');
    const inputSchema = schemaSpec(def.inputSchema);
    const outputSchema = schemaSpec(def.outputSchema, 'output');
    const spec = {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema,
      outputSchema,
      hints: def.hints ?? null,
      mode: def.mode,
      sensitive: def.sensitive ?? [],
      hasSummary: typeof def.summary === 'function',
      hasChanges: typeof def.changes === 'function',
      hasSnapshot: typeof def.snapshot === 'function',
      hasState: typeof def[STATE] === 'function',
    };
    let text;
    try {
      text = op(OP_REGISTER, scopeId, JSON.stringify(spec), now());
    } catch (error) {
      throw new TypeError(String(error && error.message));
    }
    const result = outcome(text);
    if (result.key === undefined) return () => {};
    const key = result.key;
    const fullName = prefix ? `${prefix}.${def.name}` : String(def.name);
    tools.set(key, { ...def, [STATE]: def[STATE], fullName });
    if (scopeKeys) scopeKeys.add(key);
    let removed = false;
    return function unregister() {
      if (removed) return;
      removed = true;
      tools.delete(key);
      if (scopeKeys) scopeKeys.delete(key);
      op(OP_UNREGISTER, key, now());
      drain();
    };
  }

  /** A scope object; `keys` and `children` let dispose() forget the app's functions too. */
  function makeScope(scopeId, prefix) {
    const keys = new Set();
    const children = [];
    const forget = () => {
      for (const key of keys) tools.delete(key);
      keys.clear();
      for (const child of children) child.forget();
    };
    const scope = {
      register(def) {
        const unregister = registerIn(scopeId, prefix, def, keys);
        return unregister;
      },
      scope(name) {
        const result = outcome(op(OP_CREATE_SCOPE, scopeId, String(name)));
        const child = makeScope(result.scope === undefined ? -1 : result.scope, `${prefix}.${name}`);
        children.push(child);
        return child.scope;
      },
      dispose() {
        const text = op(OP_DISPOSE_SCOPE, scopeId, now());
        forget();
        outcome(text);
      },
      get name() {
        return prefix;
      },
    };
    scope[INTERNALS] = registry;
    return { scope, forget };
  }

  function request(handle) {
    return new Promise((resolve) => {
      completions.set(handle, resolve);
      drain();
    });
  }

  const registry = {
    get rev() {
      return op(OP_REV);
    },
    register: (def) => registerIn(ROOT, '', def),
    scope(name) {
      const result = outcome(op(OP_CREATE_SCOPE, ROOT, String(name)));
      return makeScope(result.scope === undefined ? -1 : result.scope, String(name)).scope;
    },
    call(name, input, callOptions = {}) {
      const caller = callOptions.caller ?? 'human';
      const text = copyText(input === undefined ? {} : input);
      const handle = op(OP_CALL, String(name), text === undefined ? 'null' : text, caller, callOptions.rev, now());
      const signal = callOptions.signal;
      if (signal) {
        const onAbort = () => {
          op(OP_ABORT, handle, now());
          drain();
        };
        if (signal.aborted) queueMicrotask(onAbort);
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      return request(handle);
    },
    manifest(caller = 'inapp') {
      return op(OP_MANIFEST, caller);
    },
    pendingConfirmations() {
      return op(OP_PENDING_CONFIRMATIONS);
    },
    subscribePending(listener) {
      pendingListeners.add(listener);
      return () => pendingListeners.delete(listener);
    },
    confirmPending(confirmId, approve) {
      return request(op(OP_CONFIRM, String(confirmId), Boolean(approve), now()));
    },
    undo(callId) {
      return request(op(OP_UNDO, String(callId)));
    },
    events: {
      on(name, listener) {
        if (name !== 'error') throw new TypeError(`events.on: unknown event '${name}'`);
        errorListeners.add(listener);
        return () => errorListeners.delete(listener);
      },
    },
    use(plugin) {
      if (!plugin || typeof plugin[INTERNALS] !== 'function') {
        throw new TypeError('use: not a Toolmark plugin (expected bridge(...))');
      }
      return plugin[INTERNALS](internals);
    },
  };

  /** What plugins (the bridge) reach through INTERNALS. */
  const internals = {
    attach(transport, onChange, maxMessageBytes) {
      let id;
      try {
        id = op(OP_ATTACH, onChange, maxMessageBytes);
      } catch (error) {
        throw new TypeError(String(error && error.message));
      }
      const entry = { transport, off: () => {} };
      bridges.set(id, entry);
      // Longer than the limit in UTF-16 units means longer in UTF-8 bytes too:
      // only a prefix crosses into wasm memory (which never shrinks), and the
      // core still rejects it as too large.
      const limit = maxMessageBytes ?? 1048576;
      entry.off = transport.onMessage((message) => {
        if (!bridges.has(id)) return;
        let text = copyText(message);
        if (text === undefined) text = '';
        else if (text.length > limit) text = text.slice(0, limit + 1);
        core.handleInbound(id, text, now());
        drain();
      });
      drain();
      return () => {
        op(OP_DETACH, id, now());
        drain();
      };
    },
  };

  registry[INTERNALS] = registry;
  drain(); // events from the constructor (bad policy in production)
  return registry;
}
