// The hint for a page whose Content Security Policy blocks WebAssembly, and
// the error of a module that cannot be had. JS because it wraps the error of
// compiling the module, before any module exists.
import { ToolmarkError } from './errors.js';

// Chromium: "WebAssembly.Module(): Compiling or instantiating WebAssembly
// module violates ... because 'unsafe-eval' is not an allowed source of
// script ..." (older versions: "neither 'wasm-eval' nor 'unsafe-eval'");
// WebKit names 'unsafe-eval' too. Firefox: "call to WebAssembly.Module()
// blocked by CSP" (JSMSG_CSP_BLOCKED_WASM).
const BLOCKED = /wasm-eval|unsafe-eval|\bblocked by CSP\b/;

// Chromium in an extension's content script on a page whose policy lacks
// 'wasm-unsafe-eval': a CompileError naming the API and no reason at all
// ("WebAssembly.Module(): "). A module that does not compile always has one.
const NO_REASON = /^WebAssembly\.\w+\(\):\s*$/;

/** Whether `error` (thrown by compiling or instantiating a module) is a CSP refusal. */
export function blockedByCsp(error) {
  return BLOCKED.test(shown(() => error.message)) || refusedInContentScript(error);
}

/** String(read()), or '[object]' when reading or converting throws (a null-prototype object, a throwing getter). */
function shown(read) {
  try {
    return String(read());
  } catch {
    return '[object]';
  }
}

// Guarded: a host may have no WebAssembly at all (node --jitless, iOS
// Lockdown Mode, Edge's enhanced security), the error being its absence.
function refusedInContentScript(error) {
  return typeof WebAssembly === 'object' && error instanceof WebAssembly.CompileError && NO_REASON.test(error.message);
}

/**
 * The error of a loader that could not have its module, from `error`, what
 * it caught: a ToolmarkError as it is; else `module_unavailable`, the error
 * its cause, with the CSP hint for a CSP refusal, otherwise "`what` failed
 * (the error): `todo`", or, on a host without WebAssembly, what to allow.
 */
export function loadFailed(error, what, todo) {
  const none = typeof WebAssembly !== 'object';
  return error instanceof ToolmarkError
    ? error
    : unavailable(cspHint(error) || `${what} failed (${none ? 'this host has no WebAssembly' : shown(() => error)}): ${none ? 'allow WebAssembly' : todo}`, error);
}

/** For a CSP refusal, the message saying what to allow. */
function cspHint(error) {
  const elsewhere =
    'run the bridge in an extension page, an offscreen document or the background service worker ' +
    'instead (docs/extensions.md in the repository).';
  if (refusedInContentScript(error)) {
    return (
      '@toolmark/bridge-wasm: WebAssembly was refused without a reason, as Chromium refuses it in an ' +
      "extension's content script on a page whose Content Security Policy lacks 'wasm-unsafe-eval': " +
      "the page's policy applies there, which the extension cannot change: " +
      elsewhere
    );
  }
  if (blockedByCsp(error)) {
    // A web page's policy is the page's own: an extension's script there (a
    // content script in the MAIN world) cannot change it, and the manifest's
    // extension_pages policy does not apply.
    return (
      "@toolmark/bridge-wasm: this page's Content Security Policy blocks WebAssembly. Allow it with " +
      "'wasm-unsafe-eval' in script-src" +
      (onWebPage()
        ? ". If this is an extension's script, the page's policy applies, which the extension cannot change: " +
          elsewhere
        : ' (in an MV3 extension: "content_security_policy": ' +
          "{ \"extension_pages\": \"script-src 'self' 'wasm-unsafe-eval'; object-src 'self';\" }).")
    );
  }
}

/** Whether this host is a web page (http or https), not an extension's page or worker. */
function onWebPage() {
  return /^https?:$/.test(shown(() => globalThis.location.protocol));
}

/** The package's module could not be fetched, compiled or instantiated: `module_unavailable`. */
export function unavailable(message, cause) {
  return new ToolmarkError('module_unavailable', message, cause === undefined ? undefined : { cause });
}
