// The messages the in-page channel's agent end sends (src/wasm/in_page.rs).
// JS because an object literal is made in one crossing, where a property
// write per key from wasm cost about a tenth of an in-page call
// (docs/benchmarks.md, "The in-page call path, second pass").
export const agentMessage = (type, clientId, id) => ({ protocol: 1, type, clientId, id });

export const callMessage = (clientId, id, tool, input) => ({ protocol: 1, type: 'call', clientId, id, tool, input });
