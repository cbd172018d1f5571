// ToolmarkError: misconfiguration thrown in dev mode, and the thrown-only codes.
// JS so that `instanceof` works: the core (src/wasm/error.rs) imports this class.
export class ToolmarkError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = 'ToolmarkError';
    this.code = code;
  }
}
