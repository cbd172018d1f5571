// The code points of a Unicode property as the page's own RegExp (u flag)
// has them, for the module's linear-time `pattern` engine
// (src/schema/pattern.rs, `PropertyRanges`): the module then carries no
// Unicode tables, and `\p{…}` means in it what it means in the page.
//
// The RegExp scans one string holding every code point in order, one plane
// at a time, with `([\p{…}&&P]+)|([\P{…}&&P]+)` (`v` flag, P the plane):
// each match is a run of code points in the property or out of it. A
// greedy run (bounded, see RUN) costs less than a search for the next match start, and a
// class cut down to one plane costs less per character than the whole
// property (a character past U+FFFF took V8 ~30 ns against \p{L}, and
// there are a million). Where `v` is missing, the whole property, slower.
// Surrogates are scanned apart, each half on its own: a high surrogate
// before a low one would pair.

const PLANE = 0x10000;
// Runs of at most this many: Chromium's V8 took 20 times longer per
// character over one run of a whole plane than over runs of a thousand.
const RUN = '{1,1024}';
let planes;

function units(from, to) {
  let text = '';
  for (let at = from; at < to; at += 8192) {
    const chunk = new Uint16Array(Math.min(8192, to - at));
    for (let i = 0; i < chunk.length; i++) chunk[i] = at + i;
    text += String.fromCharCode.apply(null, chunk);
  }
  return text;
}

/** Each plane's code points in order, as [first code point, text]. */
function build() {
  planes = [[0, units(0, 0xd800)], [0xe000, units(0xe000, PLANE)], [0xd800, units(0xd800, 0xdc00)], [0xdc00, units(0xdc00, 0xe000)]];
  const pairs = new Uint16Array(2 * PLANE);
  for (let plane = 1; plane <= 16; plane++) {
    const high = 0xd800 + (plane - 1) * 64;
    for (let c = 0; c < PLANE; c++) {
      pairs[2 * c] = high + (c >> 10);
      pairs[2 * c + 1] = 0xdc00 + (c & 0x3ff);
    }
    let text = '';
    for (let at = 0; at < pairs.length; at += 8192) text += String.fromCharCode.apply(null, pairs.subarray(at, at + 8192));
    planes.push([plane * PLANE, text]);
  }
}

const hex = (c) => c.toString(16);

/** `(low, high)` pairs, flat; `undefined` when the RegExp (u flag) has no such property. */
export const propertyRanges = (name) => {
  try {
    new RegExp(`\\p{${name}}`, 'u');
  } catch {
    return undefined;
  }
  if (planes === undefined) build();
  const ranges = [];
  for (const [first, text] of planes) {
    const units = first < PLANE ? 1 : 2;
    const last = first + text.length / units - 1;
    let run;
    try {
      const within = `[\\u{${hex(first)}}-\\u{${hex(last)}}]`;
      run = new RegExp(`([\\p{${name}}&&${within}]${RUN})|[\\P{${name}}&&${within}]${RUN}`, 'gv');
    } catch {
      run = new RegExp(`(\\p{${name}}${RUN})|\\P{${name}}${RUN}`, 'gu');
    }
    for (let match; (match = run.exec(text)) !== null; ) {
      if (match[1] === undefined) continue;
      const low = first + match.index / units;
      const high = first + run.lastIndex / units - 1;
      if (ranges[ranges.length - 1] === low - 1) ranges[ranges.length - 1] = high;
      else ranges.push(low, high);
    }
  }
  return new Uint32Array(ranges);
};
