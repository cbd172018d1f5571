// The built package in real headless Chromium: loads from a plain <script type=module>
// with no init call, and its ids come from crypto.getRandomValues.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumWithServer } from './support/browser.mjs';

const chromium = chromiumWithServer();

test('pkg loads in Chromium without an init call', async () => {
  const page = await chromium.open();
  const out = await page.evaluate(async () => {
    const root = await import('/pkg/index.js');
    const protocol = await import('/pkg/protocol/index.js');
    const call = { protocol: 1, type: 'call', clientId: 'p', id: 'i', tool: 't', input: { q: 'é😀' } };
    return {
      id: root.newId(),
      llm: root.llmName('signup.fill'),
      version: protocol.PROTOCOL_VERSION,
      valid: protocol.validateMessage(call, 'toPage'),
      invalid: protocol.validateMessage({ ...call, extra: true }, 'toPage'),
      schemaId: protocol.protocolSchemas.agentToPage.$id,
    };
  });
  assert.match(out.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(out.llm, 'signup__fill');
  assert.equal(out.version, 1);
  assert.equal(out.valid.ok, true);
  assert.equal(out.valid.message.input.q, 'é😀');
  assert.deepEqual(out.invalid, { ok: false, errors: [{ path: 'extra', message: 'must NOT have additional properties' }] });
  assert.equal(out.schemaId, 'urn:toolmark:protocol:v1:agent-to-page');
  assert.deepEqual(page.errors, []);
});

test('newId takes its bytes from crypto.getRandomValues', async () => {
  const page = await chromium.open();
  const out = await page.evaluate(async () => {
    const { newId } = await import('/pkg/index.js');
    const real = crypto.getRandomValues.bind(crypto);
    let calls = 0;
    crypto.getRandomValues = (array) => {
      calls++;
      return array.fill(0x5a);
    };
    // Ids are drawn from a pool of 4096 bytes (256 ids) that one call refills.
    const stubbed = Array.from({ length: 257 }, () => newId());
    crypto.getRandomValues = real;
    return { stubbed, calls, after: Array.from({ length: 257 }, () => newId()) };
  });
  const fromStub = '5a5a5a5a-5a5a-4a5a-9a5a-5a5a5a5a5a5a';
  // 257 ids refill the pool once or twice (it may hold up to 256 ids when stubbed).
  assert.ok(out.calls === 1 || out.calls === 2, `${out.calls} getRandomValues calls for 257 ids`);
  assert.equal(out.stubbed.at(-1), fromStub, 'the ids come from its bytes');
  assert.notEqual(out.after.at(-1), fromStub, 'and from fresh bytes once refilled');
});
