// Differential test: the package's validateMessage (Rust/wasm) against ajv
// running the emitted JSON Schemas (pkg/protocol/v1/*.json), on a seeded
// corpus of valid messages and their mutations (tests/node/corpus.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ajvModule from 'ajv/dist/2020.js';
import { generateCorpus, nestingDepth, hasLoneSurrogate } from './corpus.mjs';

const { validateMessage, protocolSchemas } = await import(new URL('../../pkg/protocol/index.js', import.meta.url));

const Ajv2020 = ajvModule.default.default ?? ajvModule.default;
const readSchema = (file) => JSON.parse(readFileSync(new URL(`../../pkg/protocol/v1/${file}`, import.meta.url), 'utf8'));
const pageToAgentSchema = readSchema('page-to-agent.json');
const agentToPageSchema = readSchema('agent-to-page.json');

const ajv = new Ajv2020({ strict: false, allErrors: true, strictNumbers: true });
const schemaFor = {
  toAgent: ajv.compile(pageToAgentSchema),
  toPage: ajv.compile(agentToPageSchema),
};
const DIRECTIONS = ['toPage', 'toAgent'];
const TYPES = { toPage: ['call', 'describe', 'cancel'], toAgent: ['manifest', 'changed', 'result', 'confirmed'] };
const STATUSES = ['ok', 'invalid', 'refused', 'needs_confirmation', 'cancelled', 'error'];

const SEED = Number(process.env.TOOLMARK_CORPUS_SEED || 0x70017a4c);
const corpus = generateCorpus(SEED);

/** The value as it travels (JSON.stringify semantics: -0 → 0, ±Infinity → null). */
const travelled = (value) => JSON.parse(JSON.stringify(value));
/** True when JSON.stringify changes the value (a -0 or a non-finite number inside). */
function changedByJson(value) {
  if (typeof value === 'number') return Object.is(value, -0) || !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(changedByJson);
}

// Raw newlines in JSON text are only layout (strings escape theirs), so this keeps the text's meaning.
const oneLine = (text) => text.replace(/\s*\n\s*/g, ' ').trim();
const clip = (text, n = 400) => (text.length > n ? `${text.slice(0, n)}… (${text.length} chars)` : text);

// Run everything once; the tests below check different properties of the run.
const runs = [];
for (const entry of corpus) {
  const value = JSON.parse(entry.text);
  const verdicts = {};
  for (const direction of DIRECTIONS) {
    const validate = schemaFor[direction];
    const ajvOk = validate(value);
    const ajvErrors = ajvOk ? [] : validate.errors.map((e) => `${e.instancePath || '(root)'} ${e.message}`);
    let ours;
    try {
      ours = validateMessage(value, direction);
    } catch (error) {
      ours = { threw: error };
    }
    verdicts[direction] = { ajvOk, ajvErrors, ours };
  }
  runs.push({ entry, value, verdicts });
}

test('corpus: deterministic, large, JSON, nested at most 100, no lone surrogates', () => {
  assert.ok(corpus.length >= 5000, `corpus has ${corpus.length} entries`);
  assert.deepEqual(
    generateCorpus(SEED).map((e) => e.text),
    corpus.map((e) => e.text),
    'same seed, same corpus',
  );
  for (const { entry, value } of runs) {
    assert.equal(typeof entry.note, 'string');
    assert.ok(nestingDepth(value) <= 100, entry.note);
    assert.ok(!hasLoneSurrogate(value), entry.note);
  }
});

test('protocolSchemas are the emitted JSON files', () => {
  assert.deepStrictEqual(protocolSchemas.pageToAgent, pageToAgentSchema);
  assert.deepStrictEqual(protocolSchemas.agentToPage, agentToPageSchema);
});

test('validateMessage agrees with ajv on every corpus entry, both directions', (t) => {
  const disagreements = [];
  const counts = { toPage: { valid: 0, invalid: 0 }, toAgent: { valid: 0, invalid: 0 } };
  for (const { entry, verdicts } of runs) {
    for (const direction of DIRECTIONS) {
      const { ajvOk, ajvErrors, ours } = verdicts[direction];
      counts[direction][ajvOk ? 'valid' : 'invalid'] += 1;
      if (ours.threw) {
        disagreements.push({ entry, direction, ajv: ajvOk, ours: `threw ${ours.threw}`, ajvErrors });
      } else if (ours.ok !== ajvOk) {
        disagreements.push({ entry, direction, ajv: ajvOk, ours: ours.ok ? 'ok' : JSON.stringify(ours.errors), ajvErrors });
      }
    }
  }
  const summary =
    `differential: ${corpus.length} messages; ` +
    `toPage ${counts.toPage.valid} valid / ${counts.toPage.invalid} invalid; ` +
    `toAgent ${counts.toAgent.valid} valid / ${counts.toAgent.invalid} invalid; ` +
    `${disagreements.length} disagreements`;
  t.diagnostic(summary);
  if (disagreements.length > 0) {
    const listed = disagreements.slice(0, 20).map(
      (d, i) =>
        `#${i + 1} [${d.direction}] ${d.entry.note}\n` +
        `   text: ${clip(oneLine(d.entry.text))}\n` +
        `   ajv: ${d.ajv ? 'valid' : `invalid (${clip(d.ajvErrors.join('; '), 300)})`}\n` +
        `   validateMessage: ${d.ours === 'ok' ? 'valid' : `invalid ${clip(String(d.ours), 300)}`}`,
    );
    assert.fail(`${disagreements.length} disagreements between ajv and validateMessage (first 20):\n${listed.join('\n')}`);
  }
});

test('both verdicts occur often in each direction', () => {
  for (const direction of DIRECTIONS) {
    const valid = runs.filter((r) => r.verdicts[direction].ajvOk).length;
    const invalid = runs.length - valid;
    assert.ok(valid >= 250, `${direction}: only ${valid} valid`);
    assert.ok(invalid >= 2000, `${direction}: only ${invalid} invalid`);
  }
  const validAnywhere = runs.filter((r) => DIRECTIONS.some((d) => r.verdicts[d].ajvOk)).length;
  assert.ok(validAnywhere >= 500, `only ${validAnywhere} valid messages`);
  // No message is valid both ways (the type decides the direction).
  assert.equal(runs.filter((r) => DIRECTIONS.every((d) => r.verdicts[d].ajvOk)).length, 0);
});

test('every message type, result status, refused code and cancelled by is valid somewhere', () => {
  const seen = new Set();
  for (const { value, verdicts } of runs) {
    for (const direction of DIRECTIONS) {
      if (!verdicts[direction].ajvOk || !verdicts[direction].ours.ok) continue;
      seen.add(`${direction} ${value.type}`);
      const result = value.result;
      if (result) {
        seen.add(`${value.type} ${result.status}`);
        if (result.code) seen.add(`code ${result.code}`);
        if (result.by) seen.add(`by ${result.by}`);
      }
    }
  }
  const wanted = [
    ...DIRECTIONS.flatMap((d) => TYPES[d].map((type) => `${d} ${type}`)),
    ...STATUSES.flatMap((s) => [`result ${s}`, `confirmed ${s}`]),
    ...['unknown_tool', 'stale', 'not_allowed', 'busy', 'undo_unavailable', 'confirmation_expired'].map((c) => `code ${c}`),
    ...['operator', 'signal', 'policy'].map((b) => `by ${b}`),
  ];
  assert.deepEqual(wanted.filter((w) => !seen.has(w)), []);
});

test('hand-built valid messages are valid in their direction only', () => {
  const wrong = [];
  for (const { entry, verdicts } of runs) {
    if (!entry.expect) continue;
    for (const direction of DIRECTIONS) {
      const want = direction === entry.expect;
      if (verdicts[direction].ajvOk !== want || verdicts[direction].ours.ok !== want) {
        wrong.push(`[${direction}] ${entry.note}: ajv ${verdicts[direction].ajvOk}, validateMessage ${verdicts[direction].ours.ok}`);
      }
    }
  }
  assert.deepEqual(wrong.slice(0, 20), []);
});

test('a valid verdict returns the message (its JSON copy)', () => {
  let checked = 0;
  for (const { entry, value, verdicts } of runs) {
    for (const direction of DIRECTIONS) {
      const { ours } = verdicts[direction];
      if (!ours.ok) continue;
      checked += 1;
      // JSON carries -0 as 0 and ±Infinity as null; anything else is kept exactly.
      const expected = changedByJson(value) ? travelled(value) : value;
      assert.deepStrictEqual(ours.message, expected, entry.note);
      assert.notEqual(ours.message, value, 'a copy, not the same object');
    }
  }
  assert.ok(checked >= 500);
});

/** `value` with every string (keys kept) ending in half a surrogate pair, `half`. */
function withHalfPairs(value, half) {
  if (typeof value === 'string') return value + half;
  if (Array.isArray(value)) return value.map((item) => withHalfPairs(item, half));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withHalfPairs(item, half)]));
}

test('validateMessage agrees with ajv on strings holding half a surrogate pair, both directions', () => {
  const disagreements = [];
  let checked = 0;
  for (const { entry, value } of runs.slice(0, 1000)) {
    for (const half of ['\ud83c', '\udf89']) {
      const halved = withHalfPairs(value, half);
      for (const direction of DIRECTIONS) {
        const ajvOk = schemaFor[direction](halved);
        const ours = validateMessage(halved, direction);
        checked++;
        if (ours.ok !== ajvOk) disagreements.push(`[${direction}] ${entry.note}: ajv ${ajvOk}, ours ${JSON.stringify(ours.errors)}`);
      }
    }
  }
  assert.ok(checked >= 4000, `${checked} checked`);
  assert.deepEqual(disagreements.slice(0, 10), []);
});
