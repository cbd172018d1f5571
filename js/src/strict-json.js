// The strict `JSON.stringify` of tool results and validated inputs
// (src/wasm/values.rs, `Strict`). JS because the replacer runs once per
// value written: as a wasm function it was a call into the module and two
// type tests back out per value, about a tenth of an in-page call for a
// two-value result. The values JSON writes unchanged (finite numbers,
// strings, objects, booleans, null, undefined) pass here; every other one
// goes to `refuse`, the module's replacer, which says why and throws.
//
// With `room`, a large text comes with trailing spaces: the module's copy of
// it then has room for the rest of the `result` message, which is written
// around it in place (src/protocol/message.rs, `into_json`), so a large
// result is held once in wasm memory, not twice.
const ROOM_FROM = 65536;
const ROOM = ' '.repeat(256);

export const strictStringify = (value, refuse, room) => {
  const text = JSON.stringify(value, (key, item) => {
    const type = typeof item;
    return (type === 'number' ? Number.isFinite(item) : type !== 'function' && type !== 'symbol' && type !== 'bigint')
      ? item
      : refuse(key, item);
  });
  return room && text !== undefined && text.length >= ROOM_FROM ? text + ROOM : text;
};
