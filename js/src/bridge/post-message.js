// postMessageTransport({ target, targetOrigin, allowedOrigins, source? }): the core's
// postMessage driver (src/wasm/post_message.rs). JS because an entry point is a module.
import { wasm } from '../internal.js';
import { endOnlyThroughApi } from '../api-ends.js';

endOnlyThroughApi(wasm.PostMessageTransport);
export const postMessageTransport = wasm.postMessageTransport;
