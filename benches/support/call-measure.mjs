// Per-call latency and calls per second of an async call, shared by Node and
// the Chromium page (benches/call.mjs): imports nothing.

export const BATCH = 32;
export const SCOPES = 8;
export const echo = (input) => ({ n: input.n });
export const echoSchema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };

const sorted = (list) => [...list].sort((a, b) => a - b);

/**
 * Median and p99 in µs of `call(i)` awaited one at a time, after a warm-up.
 * With `block` > 1 each sample is the mean of `block` calls in a row: a page
 * that is not cross-origin isolated sees performance.now() in 100 µs steps.
 */
export async function latency(call, { count = 20000, warmup = 2000, block = 1 } = {}) {
  for (let i = 0; i < warmup; i++) await call(i);
  const samples = Math.floor(count / block);
  const times = new Float64Array(samples);
  for (let k = 0, i = 0; k < samples; k++) {
    const start = performance.now();
    for (let b = 0; b < block; b++) await call(i++);
    times[k] = (performance.now() - start) / block;
  }
  const s = sorted(times);
  return { median: s[samples >> 1] * 1000, p99: s[Math.floor(samples * 0.99)] * 1000 };
}

/** Calls per second of `batch()` (making `perBatch` calls), median of 5 runs of ~300 ms after a warm-up. */
export async function rate(batch, perBatch, { runMs = 300, runs = 5 } = {}) {
  const rates = [];
  for (let run = -1; run < runs; run++) {
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < runMs) {
      await batch();
      calls += perBatch;
    }
    if (run >= 0) rates.push((calls * 1000) / (performance.now() - start));
  }
  return sorted(rates)[runs >> 1];
}

/**
 * The figures for one way of calling: `one(scope, i)` makes one call and
 * checks its answer.
 */
export async function figures(one, options = {}) {
  const { median, p99 } = await latency((i) => one(0, i), options);
  const oneScope = await rate(() => Promise.all(Array.from({ length: BATCH }, (_, i) => one(0, i))), BATCH);
  const eightScopes = await rate(
    () => Promise.all(Array.from({ length: SCOPES * BATCH }, (_, i) => one(i % SCOPES, i))),
    SCOPES * BATCH,
  );
  return { median, p99, oneScope, eightScopes };
}

export function okData(result, i) {
  if (result.status !== 'ok' || result.data.n !== i) throw new Error(`bad answer: ${JSON.stringify(result)}`);
}

/** The package's registry with s0…s7.echo on an in-page channel; resolves when the agent sees all 8. */
export async function inPageSetup({ createToolmark, bridge, createInPageChannel }) {
  const tm = createToolmark();
  for (let s = 0; s < SCOPES; s++) {
    tm.scope(`s${s}`).register({ name: 'echo', description: 'Echoes a number', hints: { readOnly: true }, inputSchema: echoSchema, run: echo });
  }
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < SCOPES) await new Promise((r) => setTimeout(r, 0));
  return { tm, agent };
}

export function table(rows) {
  const direct = rows.find((r) => r.name === 'direct');
  const lines = ['way\tmedian µs\tp99 µs\tcalls/s 1 scope\tcalls/s 8 scopes\tmedian overhead over direct, µs'];
  for (const r of rows) {
    lines.push([r.name, r.median.toFixed(2), r.p99.toFixed(2), r.oneScope.toFixed(0), r.eightScopes.toFixed(0),
      (r.median - direct.median).toFixed(2)].join('\t'));
  }
  return lines.join('\n');
}
