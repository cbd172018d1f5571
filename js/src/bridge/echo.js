// echoTransport({ echo, channel, event?, postUrl?, headers?, fetch? }): the core's
// Laravel Echo driver (src/wasm/echo.rs). JS because an entry point is a module.
import { wasm } from '../internal.js';
import { endOnlyThroughApi } from '../api-ends.js';

endOnlyThroughApi(wasm.EchoTransport);
export const echoTransport = wasm.echoTransport;
