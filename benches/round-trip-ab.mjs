// node benches/round-trip-ab.mjs baselineDir candidateDir [--rounds N]:
// the in-page round trip of two packages compared in one process, for
// differences smaller than benches/round-trip.mjs can show on a shared
// machine (there each package runs in its own process, seconds apart, and
// one run moves by ±10%).
// - Both packages are loaded side by side (two modules, two registries, one
//   trivial read-only tool on one scope, an in-page channel each) and
//   measured in alternating slices of ~150 ms of CPU time (batches of 32
//   concurrent agent.call), so a drift in the machine's speed meets both.
// - A process favours the package it loaded first by about 2% (same package
//   twice: 0.97–0.99), so it runs twice, once in each order, in fresh
//   processes; the figure is the geometric mean of the two orders' ratios.
// Prints calls per second of CPU time per package and order, each order's
// ratio (candidate / baseline, median over the rounds) and their mean.
// Asserts only that every call answered ok.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadPackage } from './support/package.mjs';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt === -1 ? 40 : Number(args[roundsAt + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 6) throw new Error('--rounds takes a whole number of at least 6');
const positional = args.filter((a, i) => a !== '--rounds' && args[i - 1] !== '--rounds');
const WARM_UP = 4;
const SLICE_MS = 150;
const BATCH = 32;

async function load(dir) {
  const { createToolmark, bridge, createInPageChannel } = await loadPackage(dir);
  const tm = createToolmark();
  tm.register({ name: 'echo', description: 'Echoes a number', hints: { readOnly: true }, run: (input) => ({ n: input.n }) });
  const { transport, agent } = createInPageChannel();
  tm.use(bridge({ transport }));
  while (agent.tools.length < 1) await new Promise((r) => setImmediate(r));
  return async () => {
    const results = await Promise.all(Array.from({ length: BATCH }, (_, i) => agent.call('echo', { n: i })));
    for (const r of results) if (r.status !== 'ok') throw new Error(JSON.stringify(r));
  };
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

if (positional[0] === '--child') {
  // dirs in load order; reported in the order given on the command line.
  const dirs = positional.slice(1);
  const batches = [];
  for (const dir of dirs) batches.push(await load(dir));
  const totals = dirs.map(() => ({ calls: 0, ms: 0 }));
  const ratios = [];
  for (let round = 0; round < ROUNDS; round++) {
    const rates = [];
    // Alternate which goes first within a round, too.
    const order = round % 2 ? [1, 0] : [0, 1];
    for (const k of order) {
      const started = cpuMs();
      let calls = 0;
      while (cpuMs() - started < SLICE_MS) {
        await batches[k]();
        calls += BATCH;
      }
      const spent = cpuMs() - started;
      rates[k] = calls / spent;
      if (round >= WARM_UP) {
        totals[k].calls += calls;
        totals[k].ms += spent;
      }
    }
    if (round >= WARM_UP) ratios.push(rates[1] / rates[0]);
  }
  process.stdout.write(JSON.stringify({
    perSecond: totals.map((t) => (t.calls / t.ms) * 1000),
    ratio: median(ratios), // second loaded / first loaded
  }));
  process.exit(0);
}

if (positional.length !== 2) throw new Error('usage: node benches/round-trip-ab.mjs baselineDir candidateDir [--rounds N]');
const [baseline, candidate] = positional;
const child = (first, second) =>
  JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', first, second, '--rounds', String(ROUNDS)], { encoding: 'utf8' }));
const forward = child(baseline, candidate); // candidate loaded second
const backward = child(candidate, baseline); // candidate loaded first
const forwardRatio = forward.ratio;
const backwardRatio = 1 / backward.ratio;
console.log(`in-page round trip, one scope, calls/s of CPU time (${ROUNDS - WARM_UP} slices of ${SLICE_MS} ms each)`);
console.log(`baseline loaded first:  ${baseline} ${forward.perSecond[0].toFixed(0)}, ${candidate} ${forward.perSecond[1].toFixed(0)}, ratio ${forwardRatio.toFixed(3)}`);
console.log(`candidate loaded first: ${candidate} ${backward.perSecond[0].toFixed(0)}, ${baseline} ${backward.perSecond[1].toFixed(0)}, ratio ${backwardRatio.toFixed(3)}`);
console.log(`${candidate} / ${baseline}: ${Math.sqrt(forwardRatio * backwardRatio).toFixed(3)} (geometric mean of the two orders)`);
