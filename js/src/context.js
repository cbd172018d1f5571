// The `ctx` a tool's `run` receives: { signal, caller, callId, confirm, files }.
// JS because an object literal is made in one crossing (built from wasm it
// took a property write per key), and `signal`'s AbortController is made
// only when the tool reads it (together about a fifth of an in-page call:
// docs/benchmarks.md, "The in-page call path, second pass"). The driver
// (src/wasm/driver/runs.rs) decides when a run is aborted.
export class RunContext {
  constructor(run, caller, callId, confirm, resolve) {
    let controller;
    let aborted = false;
    const signal = () => {
      if (controller === undefined) {
        controller = new AbortController();
        if (aborted) controller.abort();
      }
      return controller.signal;
    };
    this.context = {
      get signal() {
        return signal();
      },
      caller,
      callId,
      confirm: (message) => confirm(run, message),
      files: { resolve },
    };
    this.abort = () => {
      aborted = true;
      controller?.abort();
    };
  }
}
