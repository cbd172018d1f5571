// The built package in Node: ready after import (no init call), every export of issue 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
// An independent llmName (JS FNV-1a), to check the Rust one against.
import { llmNameOf } from './corpus.mjs';

const pkgUrl = new URL('../../pkg/', import.meta.url);
const root = await import(new URL('index.js', pkgUrl));
const protocol = await import(new URL('protocol/index.js', pkgUrl));

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('usable right after import: no init call', () => {
  assert.equal(typeof root.newId, 'function');
  assert.match(root.newId(), UUID_V4);
  assert.equal(protocol.PROTOCOL_VERSION, 1);
});

test('newId: RFC 4122 v4 UUIDs, all distinct', () => {
  const ids = new Set();
  for (let i = 0; i < 10000; i++) {
    const id = root.newId();
    assert.match(id, UUID_V4);
    ids.add(id);
  }
  assert.equal(ids.size, 10000);
});

test('llmName: fixed vectors', () => {
  assert.equal(root.llmName('signup.fill'), 'signup__fill');
  assert.equal(root.llmName('a.b.c'), 'a__b__c');
  assert.equal(root.llmName('x'.repeat(64)), 'x'.repeat(64));
  assert.equal(
    root.llmName('billing.invoices.line_items.adjustments.create_with_a_really_long_name'),
    'billing__invoices__line_items__adjustments__create_with_14142769',
  );
  for (const name of ['y'.repeat(65), 'a.'.repeat(40) + 'z', 'scope.'.repeat(21) + 'tool']) {
    assert.equal(root.llmName(name), llmNameOf(name));
    assert.match(root.llmName(name), /^[a-zA-Z0-9_-]{1,64}$/);
  }
  assert.throws(() => root.llmName(42), { name: 'ToolmarkError', code: 'invalid_argument' });
});

test('protocolSchemas are the emitted JSON files, frozen', () => {
  const read = (name) => JSON.parse(readFileSync(new URL(`protocol/v1/${name}.json`, pkgUrl), 'utf8'));
  assert.deepEqual(protocol.protocolSchemas.pageToAgent, read('page-to-agent'));
  assert.deepEqual(protocol.protocolSchemas.agentToPage, read('agent-to-page'));
  assert.equal(protocol.protocolSchemas.pageToAgent.$id, 'urn:toolmark:protocol:v1:page-to-agent');
  assert.equal(protocol.protocolSchemas.agentToPage.$id, 'urn:toolmark:protocol:v1:agent-to-page');
  assert.ok(Object.isFrozen(protocol.protocolSchemas.pageToAgent.$defs));
});

test('validateMessage: valid messages come back as a plain copy', () => {
  class Weird {
    constructor() {
      this.protocol = 1;
      this.type = 'cancel';
      this.clientId = 'page';
      this.id = 'call';
    }
    get hidden() {
      return 'getters on the prototype do not travel';
    }
  }
  const result = protocol.validateMessage(new Weird(), 'toPage');
  assert.equal(result.ok, true);
  assert.deepEqual(result.message, { protocol: 1, type: 'cancel', clientId: 'page', id: 'call' });
  assert.equal(Object.getPrototypeOf(result.message), Object.prototype);
});

test('validateMessage: errors with paths, both directions', () => {
  const call = { protocol: 1, type: 'call', clientId: 'p', id: 'i', tool: 't', input: {} };
  assert.deepEqual(protocol.validateMessage(call, 'toPage'), { ok: true, message: call });
  const wrongWay = protocol.validateMessage(call, 'toAgent');
  assert.equal(wrongWay.ok, false);
  assert.equal(wrongWay.errors[0].path, 'type');
  assert.deepEqual(protocol.validateMessage({ ...call, rev: -1 }, 'toPage').errors, [
    { path: 'rev', message: 'must be >= 0' },
  ]);
  assert.deepEqual(protocol.validateMessage({ ...call, protocol: 2 }, 'toPage').errors, [
    { path: 'protocol', message: 'must be equal to 1' },
  ]);
  const result = { protocol: 1, type: 'result', clientId: 'p', id: 'i', result: { status: 'refused', code: 'busy', message: 'm', rev: 1 } };
  assert.deepEqual(protocol.validateMessage(result, 'toAgent').errors, [
    // The schema's `else: { not: { required: ['rev'] } }` fails at the result (as in ajv).
    { path: 'result', message: 'must NOT be valid' },
  ]);
});

test('validateMessage: hostile values never throw', () => {
  const cyclic = { protocol: 1 };
  cyclic.self = cyclic;
  for (const value of [undefined, null, 1, 'x', [], () => 1, Symbol('s'), cyclic, { toJSON() { throw new Error('boom'); } }, 10n]) {
    const result = protocol.validateMessage(value, 'toPage');
    assert.equal(result.ok, false);
    assert.ok(result.errors.length > 0);
  }
  assert.throws(() => protocol.validateMessage({}, 'sideways'), { name: 'ToolmarkError', code: 'invalid_argument' });
});

test('validateMessage: unpaired surrogates are judged as the schemas judge them, and kept in the message', () => {
  const cancel = { protocol: 1, type: 'cancel', clientId: 'p\ud800', id: '\udc00x' };
  assert.deepEqual(protocol.validateMessage(cancel, 'toPage'), { ok: true, message: cancel });
  const paired = { ...cancel, clientId: 'p\ud83d\ude00', id: 'x' };
  assert.equal(protocol.validateMessage(paired, 'toPage').ok, true);
  // The page's own result of a string cut mid-pair.
  const result = { protocol: 1, type: 'result', clientId: 'c', id: '1', result: { status: 'ok', data: { text: 'half \ud83c' } } };
  assert.deepEqual(protocol.validateMessage(result, 'toAgent'), { ok: true, message: result });
  const empty = protocol.validateMessage({ ...cancel, id: '' }, 'toPage');
  assert.equal(empty.ok, false);
  assert.ok(empty.errors.some((e) => e.path === 'id'), JSON.stringify(empty.errors));
});

test('validateMessage: a text too long or too deep to read is refused saying so, and the module goes on', () => {
  // 9 million numbers: 18 MB of JSON, whose values would take gigabytes.
  const huge = { protocol: 1, type: 'call', clientId: 'c', id: '1', tool: 't', input: new Array(9_000_000).fill(0) };
  assert.deepEqual(protocol.validateMessage(huge, 'toPage'), {
    ok: false,
    errors: [{ path: '', message: 'longer than 16777216 bytes of JSON: not validated' }],
  });
  let deep = 1;
  for (let i = 0; i < 200; i++) deep = [deep];
  assert.deepEqual(protocol.validateMessage({ ...huge, input: deep }, 'toPage'), {
    ok: false,
    errors: [{ path: '', message: 'nested deeper than 127: not validated' }],
  });
  assert.equal(protocol.validateMessage({ ...huge, input: {} }, 'toPage').ok, true);
});

test('validateMessage: a getter throwing something other than an Error is named in the issue', () => {
  const throwing = (thrown) => ({
    protocol: 1,
    get type() {
      throw thrown;
    },
  });
  assert.deepEqual(protocol.validateMessage(throwing(42), 'toPage').errors, [{ path: '', message: 'must be JSON: 42' }]);
  assert.deepEqual(protocol.validateMessage(throwing(new Error('boom')), 'toPage').errors, [{ path: '', message: 'must be JSON: boom' }]);
});

// The inline entry's loader decodes the inlined hex with Uint8Array.fromHex where the host
// has it, else with its digit loop (never Node's Buffer: tests/node/
// browser-globals.test.mjs). Each path in a fresh Node; Node before 25 has no
// fromHex, so a stand-in shows that it is preferred. Every path must give the same module: its
// schemas and ids come from the module's code and data.
const DECODE_PATHS = {
  fromHex: `Uint8Array.fromHex = (text) => { used.push('fromHex'); return new Uint8Array(Buffer.from(text, 'hex')); };`,
  loop: `delete Uint8Array.fromHex; used.push('loop');`,
};

for (const [path, prelude] of Object.entries(DECODE_PATHS)) {
  test(`the inlined module decodes through ${path}`, () => {
    const script = `const used = []; ${prelude}
      const root = await import(${JSON.stringify(new URL('inline.js', pkgUrl).href)});
      const protocol = root;
      console.log(JSON.stringify({ used, id: root.newId(), llm: root.llmName('y'.repeat(65)), schemas: protocol.protocolSchemas }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
    assert.deepEqual(out.used, [path]);
    assert.match(out.id, UUID_V4);
    assert.equal(out.llm, root.llmName('y'.repeat(65)));
    assert.deepEqual(out.schemas, JSON.parse(JSON.stringify(protocol.protocolSchemas)));
  });
}
