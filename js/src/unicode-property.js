// The code points of a Unicode property as the page's own RegExp (u flag)
// has them, for the module's linear-time `pattern` engine
// (src/schema/pattern.rs, `PropertyRanges`): the module then carries no
// Unicode tables, and `\p{…}` means in it what it means in the page.
//
// The RegExp scans strings holding every code point in order (built once),
// one plane at a time, with `([\p{…}&&P]{1,1024})|[\P{…}&&P]{1,1024}`
// (`v` flag, P the plane): each match is a run of code points in the
// property or out of it. A greedy run costs less than a search for the next
// match start, and a class cut down to one plane costs less per character
// than the whole property (a character past U+FFFF took V8 ~30 ns against
// \p{L}, and there are a million). Where `v` is missing, the whole
// property, slower. The surrogates are scanned apart, each half on its
// own: a high surrogate before a low one would pair.

const PLANE = 0x10000;
// Runs of at most this many: Chromium's V8 took 20 times longer per
// character over one run of a whole plane than over runs of a thousand.
const RUN = '{1,1024}';
let planes;

/** UTF-16 code units as a string (TextDecoder only for valid UTF-16: it would replace a lone surrogate). */
function text(units, valid) {
  if (valid && typeof TextDecoder === 'function') return new TextDecoder('utf-16le').decode(units);
  let out = '';
  for (let at = 0; at < units.length; at += 8192) out += String.fromCharCode.apply(null, units.subarray(at, at + 8192));
  return out;
}

/** The code units `from`…`to - 1` (no surrogate pairs among them) as a string. */
function units(from, to) {
  const out = new Uint16Array(to - from);
  for (let i = 0; i < out.length; i++) out[i] = from + i;
  return text(out, from >= 0xe000 || to <= 0xd800);
}

/** Each plane's code points in order, as [first code point, text]. */
function build() {
  planes = [[0, units(0, 0xd800)], [0xd800, units(0xd800, 0xdc00)], [0xdc00, units(0xdc00, 0xe000)], [0xe000, units(0xe000, PLANE)]];
  // Every code point past U+FFFF as its surrogate pair, one 32-bit word
  // each (high surrogate in the low half: UTF-16LE), decoded at once: half
  // the writes of one unit at a time, and one decoder call.
  const pairs = new Uint32Array(16 * PLANE);
  for (let i = 0; i < pairs.length; i++) pairs[i] = (0xd800 + (i >> 10)) | ((0xdc00 + (i & 0x3ff)) << 16);
  const all = text(pairs, true);
  for (let plane = 1; plane <= 16; plane++) planes.push([plane * PLANE, all.slice(2 * PLANE * (plane - 1), 2 * PLANE * plane)]);
}

const hex = (c) => c.toString(16);

/** `(low, high)` pairs, flat; `undefined` when the RegExp (u flag) has no such property. */
export const propertyRanges = (name) => {
  // ECMA-262's syntax between the braces, so the name is never more than a name.
  if (!/^\w+(=\w+)?$/.test(name)) return undefined;
  try {
    new RegExp(`\\p{${name}}`, 'u');
  } catch {
    return undefined;
  }
  if (planes === undefined) build();
  const ranges = [];
  for (const [first, chars] of planes) {
    const width = first < PLANE ? 1 : 2;
    const last = first + chars.length / width - 1;
    let run;
    try {
      const within = `[\\u{${hex(first)}}-\\u{${hex(last)}}]`;
      run = new RegExp(`([\\p{${name}}&&${within}]${RUN})|[\\P{${name}}&&${within}]${RUN}`, 'gv');
    } catch {
      run = new RegExp(`(\\p{${name}}${RUN})|\\P{${name}}${RUN}`, 'gu');
    }
    for (let match; (match = run.exec(chars)) !== null; ) {
      if (match[1] === undefined) continue;
      const low = first + match.index / width;
      const high = first + run.lastIndex / width - 1;
      if (ranges[ranges.length - 1] === low - 1) ranges[ranges.length - 1] = high;
      else ranges.push(low, high);
    }
  }
  return new Uint32Array(ranges);
};
