// The protocol's constants alone: issue 30 wants this app to ship no WebAssembly.
import { PROTOCOL_VERSION, protocolSchemas } from '@toolmark/bridge-wasm/protocol';

document.querySelector('#version').textContent = String(PROTOCOL_VERSION);
document.querySelector('#schemas').textContent = Object.values(protocolSchemas)
  .map((schema) => schema.$id)
  .join(' ');
document.title = 'done';
