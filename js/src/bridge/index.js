// bridge({ transport, onChange?, caller?, maxMessageBytes? }): attaches a
// transport to a registry with tm.use(...). The core does every check.
import { INTERNALS } from '../toolmark.js';

function checkTransport(transport) {
  if (!transport || typeof transport.send !== 'function' || typeof transport.onMessage !== 'function') {
    throw new TypeError('bridge: transport must have send(message) and onMessage(callback)');
  }
}

export function bridge(options = {}) {
  const { transport, onChange = 'manifest', caller = 'inapp', maxMessageBytes } = options;
  checkTransport(transport);
  if (caller !== 'inapp') {
    throw new TypeError(`bridge: caller must be 'inapp' in protocol v1, not ${JSON.stringify(caller)}`);
  }
  if (onChange !== 'manifest' && onChange !== 'changed') {
    throw new TypeError(`bridge: onChange must be 'manifest' or 'changed', not ${JSON.stringify(onChange)}`);
  }
  if (maxMessageBytes !== undefined && !(Number.isInteger(maxMessageBytes) && maxMessageBytes > 0)) {
    throw new TypeError(`bridge: maxMessageBytes must be a positive integer, not ${JSON.stringify(maxMessageBytes)}`);
  }
  let used = false;
  return {
    [INTERNALS](internals) {
      if (used) throw new TypeError('bridge: this bridge is already attached; create a new one (and a new transport)');
      used = true;
      const detach = internals.attach(transport, onChange, maxMessageBytes);
      let disposed = false;
      return function dispose() {
        if (disposed) return;
        disposed = true;
        detach();
      };
    },
  };
}
