// Differential test: `pattern` through the built package (regex-lite where its
// translation accepts the pattern, RegExp otherwise) against `new RegExp(p,
// 'u').test(s)`, on seeded random patterns made of ECMA-262 pieces (escapes,
// classes, groups, quantifiers, anchors, some invalid) and short texts. A
// pattern RegExp rejects must make the input invalid (the validator reports
// the bad pattern); any other disagreement fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const { createToolmark } = await import(new URL('../../pkg/index.js', import.meta.url));

const SEED = Number(process.env.TOOLMARK_PATTERN_SEED || 0x5eed1e55);
const PATTERNS = 2000;
const TEXTS = 12;

/** xorshift32: the same cases on every run for one seed. */
function random(seed) {
  let state = seed >>> 0 || 1;
  return (n) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
}

const PIECES = [
  'a', 'b', 'é', '🐲', '-', ' ', '.', '^', '$', '|', '(', ')', '(?:', '[', ']', '[^', '{', '}',
  '*', '+', '?', '{2}', '{1,}', '{0,2}', '{2,1}', '*?', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S',
  '\\b', '\\B', '\\n', '\\t', '\\v', '\\0', '\\cJ', '\\x41', '\\u00e9', '\\u{1F432}',
  '\\uD83D\\uDC32', '\\uD83D', '\\-', '\\.', '\\/', '\\\\', '\\a', '\\1', '\\p{L}', '(?=a)',
  '\\u2028', '\\u00a0', '\\ufeff', '\\u3000', '[a-c]', '[\\s\\d]', '[^\\W]', '[\\b]', '[.-]',
  '[z-a]', '[\\d-z]', '[]', '&&', '~',
];
const CHARS = ['a', 'b', 'c', 'A', '1', '_', '-', ' ', '\t', '\n', '\r', '\u000b', '\u00a0',
  '\u2028', '\ufeff', '\u3000', 'é', '🐲', '\u0008', '.', '/', '&', '~', '!', '\u0000'];

function cases(seed) {
  const next = random(seed);
  const out = [];
  for (let i = 0; i < PATTERNS; i++) {
    let pattern = '';
    const length = 1 + next(5);
    for (let j = 0; j < length; j++) pattern += PIECES[next(PIECES.length)];
    const texts = [];
    for (let k = 0; k < TEXTS; k++) {
      let text = '';
      const size = next(6);
      for (let j = 0; j < size; j++) text += CHARS[next(CHARS.length)];
      texts.push(text);
    }
    out.push({ pattern, texts });
  }
  return out;
}

function isValid(pattern) {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

function expected(pattern, text) {
  let re;
  try {
    re = new RegExp(pattern, 'u');
  } catch {
    return 'invalid';
  }
  return re.test(text) ? 'ok' : 'invalid';
}

test(`pattern: the package agrees with RegExp (seed ${SEED}, ${PATTERNS} patterns × ${TEXTS} texts)`, async () => {
  const tm = createToolmark();
  const disagreements = [];
  const counts = { valid: 0, ok: 0, invalid: 0 };
  let index = 0;
  for (const { pattern, texts } of cases(SEED)) {
    const name = `p${index++}`;
    const unregister = tm.register({
      name,
      description: 'd',
      inputSchema: { type: 'object', properties: { s: { type: 'string', pattern } } },
      run: () => 1,
    });
    if (isValid(pattern)) counts.valid++;
    for (const text of texts) {
      if (isValid(pattern)) counts[expected(pattern, text)]++;
      const result = await tm.call(name, { s: text }, { caller: 'human' });
      const want = expected(pattern, text);
      if (result.status !== want) disagreements.push({ pattern, text, got: result.status, want });
    }
    unregister();
  }
  assert.deepEqual(disagreements.slice(0, 10), []);
  // The corpus exercises both answers of valid patterns, not only errors.
  console.log(`valid patterns ${counts.valid} of ${PATTERNS}; texts ok ${counts.ok}, invalid ${counts.invalid}`);
  assert.ok(counts.valid > PATTERNS / 3 && counts.ok > 1500 && counts.invalid > 1500, JSON.stringify(counts));
});
