// websocketTransport({ url, protocols?, maxDelayMs?, terminalCloseCodes?, onOpen?, WebSocket? }):
// the core's WebSocket driver (src/wasm/websocket.rs). JS because an entry point is a module.
import { wasm } from '../internal.js';
import { endOnlyThroughApi } from '../api-ends.js';

endOnlyThroughApi(wasm.WebSocketTransport);
export const websocketTransport = wasm.websocketTransport;
