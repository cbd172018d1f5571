// The `ctx` a tool's `run` receives: { signal, caller, callId, confirm, files }.
// JS because an object is made in one crossing (built from wasm it took a
// property write per key), and `signal`'s AbortController is made only when
// the tool reads it (together about a fifth of an in-page call). `signal` is an
// own accessor defined with one shared descriptor: a getter in an object
// literal is a new accessor per object, which V8 builds about four times
// slower, and private fields compile to WeakMaps for the package's es2020
// target, slower still. The state
// behind `signal` is a symbol-keyed property, so the ctx's own string keys
// are its five properties. The driver (src/wasm/driver/runs.rs) decides
// when a run is aborted.

// undefined (neither read nor aborted), true (aborted before it was read)
// or the AbortController made when it was read.
const CONTROLLER = Symbol('toolmark.ctx.controller');

const SIGNAL = {
  get() {
    let controller = this[CONTROLLER];
    if (!(controller instanceof AbortController)) {
      const aborted = controller === true;
      controller = new AbortController();
      this[CONTROLLER] = controller;
      if (aborted) controller.abort();
    }
    return controller.signal;
  },
  enumerable: true,
  configurable: false,
};

export class RunContext {
  constructor(run, caller, callId, confirm, resolve) {
    Object.defineProperty(this, 'signal', SIGNAL);
    this.caller = caller;
    this.callId = callId;
    this.confirm = (message) => confirm(run, message);
    this.files = { resolve };
    this[CONTROLLER] = undefined;
  }
}

/** Aborts the ctx's signal (now, or when the tool first reads it). */
export const abortRun = (context) => {
  const controller = context[CONTROLLER];
  if (controller instanceof AbortController) controller.abort();
  else context[CONTROLLER] = true;
};
