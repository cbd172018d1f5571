// The inbound-pipeline corpus and its measurement, shared by Node and the
// Chromium page (benches/inbound.mjs): imports nothing, so the page can load
// it as it is. Each kind is measured alone (the 1 MiB call would swamp a mix)
// and the corpus as a whole, weighted as an agent's traffic is: mostly small
// calls.

const clientId = '5742fe13-f99c-4397-b3ca-88ea6f540ffb';
const id = (n) => `e99aa1ab-09ab-47b7-96ae-${String(n).padStart(12, '0')}`;

/** A call whose input's JSON text is about `bytes` long: form-like records. */
function bigCall(n, bytes) {
  const rows = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const row = { id: i, name: `Customer ${i}`, email: `c${i}@example.com`, note: 'x'.repeat(40), tags: ['a', 'b'], amount: i * 1.25, active: i % 2 === 0 };
    rows.push(row);
    size += JSON.stringify(row).length + 1;
  }
  return { protocol: 1, type: 'call', clientId, id: id(n), rev: 3, tool: 'crm.import', input: { rows } };
}

export function corpus() {
  const kinds = {
    'small call': { protocol: 1, type: 'call', clientId, id: id(1), rev: 3, tool: 'signup.fill', input: { email: 'ada@example.com', age: 36, plan: 'pro', newsletter: true } },
    describe: { protocol: 1, type: 'describe', clientId, id: id(2), tool: 'signup.fill' },
    cancel: { protocol: 1, type: 'cancel', clientId, id: id(3) },
    'call, 100 KB input': bigCall(4, 100 * 1024),
    'call, ~1 MiB input': bigCall(5, 1024 * 1024 - 2048),
  };
  // The mix: per 16 messages, 10 small calls, 3 describes, 2 cancels, 1 of 100 KB;
  // the ~1 MiB call is measured alone only.
  const mix = [
    ...Array(10).fill(kinds['small call']), ...Array(3).fill(kinds.describe),
    ...Array(2).fill(kinds.cancel), kinds['call, 100 KB input'],
  ];
  return { kinds, mix };
}

/**
 * Messages per second for each kind and for the mix, in both forms, for
 * `ours` and the baseline, interleaved round by round (median of 5 rounds of
 * ~100 ms each, after a warm-up). `validateMessage` is the package's;
 * `validate` is ajv's compiled validator of the agent → page schema.
 */
export function measure({ validateMessage, validate, now, roundMs = 100, rounds = 5 }) {
  const { kinds, mix } = corpus();
  const cases = { ...Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, [v]])), 'mix (16)': mix };
  const check = (ok, what) => {
    if (!ok) throw new Error(`${what}: not valid`);
  };
  const ways = {
    // A frame's text: the package's public API takes values, so a JS frame
    // handler does JSON.parse and validateMessage (which copies the value
    // through its JSON text and gives the copy back).
    'string, ours': (text) => check(validateMessage(JSON.parse(text), 'toPage').ok, 'ours'),
    'string, baseline': (text) => check(validate(JSON.parse(text)), 'ajv'),
    'object, ours': (value) => check(validateMessage(value, 'toPage').ok, 'ours'),
    'object, baseline': (value) => check(validate(JSON.parse(JSON.stringify(value))), 'ajv'),
  };
  const rate = (fn, inputs) => {
    let count = 0;
    const start = now();
    let elapsed = 0;
    do {
      for (const input of inputs) fn(input);
      count += inputs.length;
      elapsed = now() - start;
    } while (elapsed < roundMs);
    return (count * 1000) / elapsed;
  };
  const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
  const rows = [];
  for (const [name, values] of Object.entries(cases)) {
    const texts = values.map((v) => JSON.stringify(v));
    const inputs = { string: texts, object: values };
    const samples = Object.fromEntries(Object.keys(ways).map((w) => [w, []]));
    for (let round = -1; round < rounds; round++) {
      for (const [way, fn] of Object.entries(ways)) {
        const r = rate(fn, inputs[way.split(',')[0]]);
        if (round >= 0) samples[way].push(r);
      }
    }
    const row = { name, bytes: Math.round(texts.reduce((s, t) => s + t.length, 0) / texts.length) };
    for (const way of Object.keys(ways)) row[way] = median(samples[way]);
    row['string ratio'] = row['string, ours'] / row['string, baseline'];
    row['object ratio'] = row['object, ours'] / row['object, baseline'];
    rows.push(row);
  }
  return rows;
}

export function table(rows) {
  const lines = ['kind\tbytes\tstring ours/s\tstring ajv/s\tratio\tobject ours/s\tobject ajv/s\tratio'];
  for (const r of rows) {
    lines.push([r.name, r.bytes, r['string, ours'].toFixed(0), r['string, baseline'].toFixed(0), r['string ratio'].toFixed(2),
      r['object, ours'].toFixed(0), r['object, baseline'].toFixed(0), r['object ratio'].toFixed(2)].join('\t'));
  }
  return lines.join('\n');
}
