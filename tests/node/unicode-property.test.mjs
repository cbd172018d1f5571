// js/src/unicode-property.js, the page's RegExp listing a property's code
// points for the module's `pattern` engine, against `new RegExp(p, 'u')`
// on every code point, lone surrogates included (the Chromium test through
// the package, tests/node/pattern-properties-browser.test.mjs, cannot send
// them); and what it answers for a property RegExp does not know.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { propertyRanges } from '../../js/src/unicode-property.js';

const PROPERTIES = ['L', 'Lu', 'Nd', 'gc=L', 'sc=Greek', 'scx=Deva', 'Alphabetic', 'White_Space', 'Emoji', 'ASCII', 'Any', 'Assigned', 'Cs', 'Cn'];

test('each range list is what RegExp says, code point by code point', () => {
  for (const property of PROPERTIES) {
    const ranges = propertyRanges(property);
    assert.ok(ranges instanceof Uint32Array && ranges.length % 2 === 0, property);
    const inside = new Uint8Array(0x110000);
    for (let i = 0; i < ranges.length; i += 2) {
      assert.ok(ranges[i] <= ranges[i + 1] && (i === 0 || ranges[i] > ranges[i - 1] + 1), `${property}: sorted, apart`);
      inside.fill(1, ranges[i], ranges[i + 1] + 1);
    }
    const re = new RegExp(`^\\p{${property}}$`, 'u');
    const wrong = [];
    for (let c = 0; c <= 0x10ffff && wrong.length < 5; c++) {
      if (re.test(String.fromCodePoint(c)) !== (inside[c] === 1)) wrong.push(c.toString(16));
    }
    assert.deepEqual(wrong, [], property);
  }
});

test('a property RegExp does not know (u flag) is undefined', () => {
  for (const name of ['Nope', 'letter', 'Greek', 'RGI_Emoji', 'L}|.', 'L}]|[^a', 'gc=Nope', '']) assert.equal(propertyRanges(name), undefined, name);
});
