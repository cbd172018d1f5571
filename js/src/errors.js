// ToolmarkError: misconfiguration thrown in dev mode, and the thrown-only codes.
export class ToolmarkError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'ToolmarkError';
    this.code = code;
  }
}

/** Turns the core's `{"error": {code, message}}` text (or a JsError carrying it) into a ToolmarkError. */
export function fromCoreError(error) {
  const text = typeof error === 'string' ? error : error && error.message;
  try {
    const parsed = JSON.parse(text);
    if (parsed && parsed.error) return new ToolmarkError(parsed.error.code, parsed.error.message);
  } catch {
    // not a core error
  }
  return error instanceof Error ? error : new Error(String(text));
}
