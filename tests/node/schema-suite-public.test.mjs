// JSON-Schema-Test-Suite draft 2020-12 (the required tests, vendored in
// tests/data/json-schema-test-suite/) through the public API, as a page
// uses it: each group's schema is a tool's inputSchema, each test's data
// the input of a call, valid when the call is answered `ok` and invalid when
// it is answered `invalid`. The package does not fetch remote documents
// (docs/schema-suite.md): a schema that needs one of the suite's remotes is
// given it bundled, as draft 2020-12 lets a document embed a resource under
// its own `$id` (the vendored remotes/ of the same commit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createToolmark } from '../../pkg/index.node.js';

const SUITE = new URL('../data/json-schema-test-suite/', import.meta.url);
const REMOTES_BASE = 'http://localhost:1234/draft2020-12/';

/** Files skipped whole, and why (docs/schema-suite.md). */
const SKIPPED_FILES = {
  'refRemote.json': 'remote references to documents the suite does not bundle into the schema',
  'vocabulary.json': 'a custom metaschema with $vocabulary is a remote document',
};

/** Failures known today, as `file / group / test`: any other failure fails the test. */
const KNOWN_FAILURES = new Set([]);

const remotes = new Map(
  readdirSync(new URL('remotes/draft2020-12/', SUITE)).map((file) => [
    `${REMOTES_BASE}${file}`,
    JSON.parse(readFileSync(new URL(`remotes/draft2020-12/${file}`, SUITE), 'utf8')),
  ]),
);

/** The schema with every vendored remote it names embedded under `$defs`. */
function bundled(schema) {
  const text = JSON.stringify(schema);
  const needed = [...remotes].filter(([uri]) => text.includes(uri) || text.includes(uri.slice(REMOTES_BASE.length)));
  if (needed.length === 0 || typeof schema !== 'object' || schema === null) return schema;
  const defs = { ...schema.$defs };
  needed.forEach(([, remote], i) => {
    defs[`bundled-remote-${i}`] = remote;
  });
  return { ...schema, $defs: defs };
}

test('JSON-Schema-Test-Suite draft 2020-12 through register and call: every required test but the documented skips', async (t) => {
  const dir = new URL('draft2020-12/', SUITE);
  const failures = [];
  const knownSeen = new Set();
  let passed = 0;
  let skipped = 0;
  let n = 0;
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json')).sort()) {
    for (const group of JSON.parse(readFileSync(new URL(file, dir), 'utf8'))) {
      if (SKIPPED_FILES[file]) {
        skipped += group.tests.length;
        continue;
      }
      const errors = [];
      const tm = createToolmark({ onError: (error) => errors.push(error) });
      const name = `suite${n++}`;
      tm.register({ name, description: group.description, inputSchema: bundled(group.schema), run: () => null });
      for (const { description, data, valid } of group.tests) {
        const key = `${file} / ${group.description} / ${description}`;
        const result = await tm.call(name, data, { caller: 'human' });
        assert.ok(result.status === 'ok' || result.status === 'invalid', `${key}: answered ${JSON.stringify(result)}`);
        if ((result.status === 'ok') === valid) {
          passed++;
        } else if (KNOWN_FAILURES.has(key)) {
          knownSeen.add(key);
        } else {
          failures.push(`${key}: expected ${valid ? 'valid' : 'invalid'}, answered ${result.status}${errors.length ? ` (registration: ${errors[0].message})` : ''}`);
        }
      }
    }
  }
  t.diagnostic(`schema suite through the public API: ${passed} passed, ${failures.length + knownSeen.size} failed (${knownSeen.size} known), ${skipped} skipped (${Object.keys(SKIPPED_FILES).join(', ')})`);
  assert.deepEqual(failures, []);
  for (const key of KNOWN_FAILURES) {
    if (!knownSeen.has(key)) t.diagnostic(`known failure now passes, remove it from KNOWN_FAILURES: ${key}`);
  }
});
