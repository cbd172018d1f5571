// node benches/round-trip.mjs [pkgDir …]: calls per second of a trivial
// read-only tool, for each package directory given (default pkg/), in one
// process, one after the other, with the same load:
// - "bridge, 1 scope": agent.call through the in-page channel, batches of 32
//   concurrent calls on one scope (a lane holds 32);
// - "bridge, 8 scopes": the same, 8 scopes × 32 calls per batch;
// - "tm.call": the page's own call (caller human), batches of 32 on one scope;
// - "direct": the same tool function called directly (awaited, batches of 32):
//   the baseline, so 1e6/bridge − 1e6/direct is the bridge's overhead per call in µs.
// Each figure is the best of 5 runs of ~0.5 s after a warm-up. Asserts only
// that every call answered ok. Compare two builds with
//   node benches/round-trip.mjs /path/to/main/pkg pkg
// Each package is measured in a fresh node process (JIT and heap state of
// one must not favour the other), alternating, 3 rounds (--rounds N for
// more on a noisy machine); best per column, and the median over the rounds
// of each round's ratio.
// With --cpu, calls per second of the process's CPU time (user + system)
// instead of wall time: steadier on a machine shared with other work.
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const cpu = process.argv.includes('--cpu');
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt === -1 ? 3 : Number(process.argv[roundsAt + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds takes a whole number of at least 1');
const args = process.argv.slice(2).filter((a, i, all) => a !== '--cpu' && a !== '--rounds' && all[i - 1] !== '--rounds');
const child = args[0] === '--child';
const dirs = child ? args.slice(1) : args;
if (dirs.length === 0) dirs.push('pkg');

const BATCH = 32;
const SCOPES = 8;

const echo = (input) => ({ n: input.n });

async function load(dir) {
  const base = pathToFileURL(resolve(dir) + '/').href;
  const { createToolmark } = await import(`${base}index.js`);
  const { bridge } = await import(`${base}bridge/index.js`);
  const { createInPageChannel } = await import(`${base}bridge/in-page.js`);
  const tm = createToolmark();
  for (let s = 0; s < SCOPES; s++) {
    tm.scope(`s${s}`).register({
      name: 'echo',
      description: 'Echoes a number',
      hints: { readOnly: true },
      run: echo,
    });
  }
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < SCOPES) await new Promise((r) => setImmediate(r));
  return { tm, agent, run: echo };
}

function check(results) {
  for (const r of results) if (r.status !== 'ok') throw new Error(JSON.stringify(r));
}

/** The process's CPU time so far, in ms. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Calls per second of `batch()` (which makes `perBatch` calls), best of 5. */
async function rate(batch, perBatch) {
  let best = 0;
  for (let run = 0; run < 6; run++) {
    let calls = 0;
    const started = performance.now();
    const startedCpu = cpuMs();
    while (performance.now() - started < 500) {
      check(await batch());
      calls += perBatch;
    }
    const spent = cpu ? cpuMs() - startedCpu : performance.now() - started;
    const perSecond = (calls * 1000) / spent;
    if (run > 0) best = Math.max(best, perSecond); // run 0 warms up
  }
  return best;
}

const columns = ['bridge, 1 scope', 'bridge, 8 scopes', 'tm.call', 'direct'];

if (!child) {
  const best = new Map(dirs.map((dir) => [dir, { pkg: dir }]));
  const perRound = []; // each round's rows, in `dirs` order
  for (let round = 0; round < ROUNDS; round++) {
    const rowsOfRound = [];
    for (const dir of dirs) {
      const flags = cpu ? ['--cpu'] : [];
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...flags, '--child', dir], { encoding: 'utf8' });
      const row = JSON.parse(out);
      rowsOfRound.push(row);
      const kept = best.get(dir);
      for (const c of columns) kept[c] = Math.max(kept[c] ?? 0, row[c]);
    }
    perRound.push(rowsOfRound);
  }
  const rows = [...best.values()];
  console.log(['pkg', ...columns].join('\t'));
  for (const row of rows) console.log([row.pkg, ...columns.map((c) => row[c].toFixed(0))].join('\t'));
  const [first, ...rest] = rows;
  for (const row of rest) {
    console.log([`${row.pkg} / ${first.pkg}`, ...columns.map((c) => (row[c] / first[c]).toFixed(2))].join('\t'));
  }
  // The same ratios within each round (the packages measured back to back),
  // their median over the rounds: steadier than the best figures when the
  // machine's speed drifts over a run.
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  rest.forEach((row, k) => {
    const ratios = columns.map((c) => median(perRound.map((r) => r[k + 1][c] / r[0][c])).toFixed(2));
    console.log([`${row.pkg} / ${first.pkg}, median of ${ROUNDS} rounds`, ...ratios].join('\t'));
  });
  for (const row of rows) {
    const overhead = (c) => (1e6 / row[c] - 1e6 / row.direct).toFixed(1);
    console.log(`${row.pkg}: overhead per call over direct, µs: bridge 1 scope ${overhead('bridge, 1 scope')}, 8 scopes ${overhead('bridge, 8 scopes')}, tm.call ${overhead('tm.call')}`);
  }
  process.exit(0);
}

const rows = [];
for (const dir of dirs) {
  const { tm, agent, run } = await load(dir);
  const input = (i) => ({ n: i });
  const one = () => Promise.all(Array.from({ length: BATCH }, (_, i) => agent.call('s0.echo', input(i))));
  const eight = () =>
    Promise.all(
      Array.from({ length: SCOPES * BATCH }, (_, i) => agent.call(`s${i % SCOPES}.echo`, input(i))),
    );
  const page = () =>
    Promise.all(Array.from({ length: BATCH }, (_, i) => tm.call('s0.echo', input(i), { caller: 'human' })));
  const ok = (data) => ({ status: 'ok', data });
  const direct = () => Promise.all(Array.from({ length: BATCH }, (_, i) => Promise.resolve(run(input(i))).then(ok)));
  rows.push({
    pkg: dir,
    'bridge, 1 scope': await rate(one, BATCH),
    'bridge, 8 scopes': await rate(eight, SCOPES * BATCH),
    'tm.call': await rate(page, BATCH),
    direct: await rate(direct, BATCH),
  });
}

process.stdout.write(JSON.stringify(rows[0]));
