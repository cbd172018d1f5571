// The strict `JSON.stringify` of tool results and validated inputs
// (src/wasm/values.rs, `Strict`). JS because the replacer runs once per
// value written: as a wasm function it was a call into the module and two
// type tests back out per value, about a tenth of an in-page call for a
// two-value result ("The in-page call path, fourth pass" in
// docs/benchmarks.md). The values JSON writes unchanged (finite numbers,
// strings, objects, booleans, null, undefined) pass here; every other one
// goes to `refuse`, the module's replacer, which says why and throws.
export const strictStringify = (value, refuse) =>
  JSON.stringify(value, (key, item) => {
    const type = typeof item;
    return (type === 'number' ? Number.isFinite(item) : type !== 'function' && type !== 'symbol' && type !== 'bigint')
      ? item
      : refuse(key, item);
  });
