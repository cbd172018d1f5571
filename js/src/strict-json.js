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

/** The number a Number object holds, as JSON unboxes it; an object that only inherits from Number.prototype is no Number object: itself. */
function numberData(item) {
  try {
    return Number.prototype.valueOf.call(item);
  } catch {
    return item;
  }
}

// The value is written as the member `key` of its message is (a `toJSON`
// gets that key, as JSON.stringify of the whole message would give it),
// then cut out of its holder's text: `{"key":` … `}`. A Number object is
// written as its number, as JSON unboxes it.
export const strictStringify = (value, refuse, room, key) => {
  const whole = JSON.stringify({ [key]: value }, (name, item) => {
    const plain = item instanceof Number ? numberData(item) : item;
    const type = typeof plain;
    return (type === 'number' ? Number.isFinite(plain) : type !== 'function' && type !== 'symbol' && type !== 'bigint')
      ? plain
      : refuse(name, plain);
  });
  // `{}`: the value writes nothing (undefined, or a toJSON giving that).
  if (whole.length === 2) return undefined;
  const text = whole.slice(key.length + 4, -1);
  return room && text.length >= ROOM_FROM ? text + ROOM : text;
};
