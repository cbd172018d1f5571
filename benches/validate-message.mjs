// node benches/validate-message.mjs [pkgDir]: microseconds per
// validateMessage() call for a call, a result and a 20-tool manifest (the
// median of 7 rounds of 2000 calls each, after a warm-up). Prints numbers,
// asserts only that each message is valid.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const dir = pathToFileURL(resolve(process.argv[2] || 'pkg') + '/').href;
const { validateMessage } = await import(`${dir}protocol/index.js`);

const clientId = '5742fe13-f99c-4397-b3ca-88ea6f540ffb';
const id = 'e99aa1ab-09ab-47b7-96ae-3dae3bc25cf8';
const cases = {
  call: [{ protocol: 1, type: 'call', clientId, id, rev: 3, tool: 'signup.fill', input: { email: 'ada@example.com', age: 36 } }, 'toPage'],
  result: [{ protocol: 1, type: 'result', clientId, id, result: { status: 'ok', data: { saved: true, n: 2 } } }, 'toAgent'],
  'manifest (20 tools)': [{
    protocol: 1, type: 'manifest', clientId, rev: 7,
    tools: Array.from({ length: 20 }, (_, i) => ({
      name: `scope.tool_${i}`, llmName: `scope__tool_${i}`, title: `Tool ${i}`,
      description: 'Does one thing on the page', hints: { readOnly: i % 2 === 0, consequential: i % 5 === 0 },
    })),
  }, 'toAgent'],
};

for (const [name, [message, direction]] of Object.entries(cases)) {
  if (!validateMessage(message, direction).ok) throw new Error(`${name} is not valid`);
  for (let i = 0; i < 500; i++) validateMessage(message, direction);
  const rounds = [];
  for (let r = 0; r < 7; r++) {
    const start = performance.now();
    for (let i = 0; i < 2000; i++) validateMessage(message, direction);
    rounds.push(((performance.now() - start) * 1000) / 2000);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name}: ${rounds[3].toFixed(1)} µs per validateMessage`);
}
