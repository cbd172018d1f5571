// The `ctx` a tool's `run` receives: { signal, caller, callId, confirm, files }.
// JS because an object is made in one crossing (built from wasm it took a
// property write per key), and `signal`'s AbortController is made only when
// the tool reads it (together about a fifth of an in-page call:
// docs/benchmarks.md, "The in-page call path, second pass"). `signal` is an
// own accessor defined with one shared descriptor: a getter in an object
// literal is a new accessor per object, which V8 makes about four times
// slower to build (docs/benchmarks.md, "The in-page call path, fourth
// pass"). The controller and the abort mark are private fields, so the
// ctx's own keys are its five properties only. The driver
// (src/wasm/driver/runs.rs) decides when a run is aborted.

let signalOf;
let abortOf;

const SIGNAL = {
  get() {
    return signalOf(this);
  },
  enumerable: true,
  configurable: false,
};

export class RunContext {
  #controller;
  #aborted = false;

  static {
    signalOf = (context) => {
      if (context.#controller === undefined) {
        context.#controller = new AbortController();
        if (context.#aborted) context.#controller.abort();
      }
      return context.#controller.signal;
    };
    abortOf = (context) => {
      context.#aborted = true;
      context.#controller?.abort();
    };
  }

  constructor(run, caller, callId, confirm, resolve) {
    Object.defineProperty(this, 'signal', SIGNAL);
    this.caller = caller;
    this.callId = callId;
    this.confirm = (message) => confirm(run, message);
    this.files = { resolve };
  }
}

/** Aborts the ctx's signal (now, or when the tool first reads it). */
export const abortRun = (context) => abortOf(context);
