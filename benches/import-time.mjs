// node benches/import-time.mjs [pkgDir ...] [--runs N]: milliseconds from
// `import()` of a package's index.js to its first newId() (module decoded,
// compiled and instantiated), each in a fresh Node process; the packages'
// runs interleaved so machine load falls on each alike. Prints the median,
// min and max per package and the median's ratio to the first package's.
// Prints numbers, asserts nothing.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--runs');
const runs = at === -1 ? 21 : Number(args.splice(at, 2)[1]);
const dirs = args.length ? args : ['pkg'];

const script = (dir) => `
  const start = performance.now();
  const { newId } = await import(${JSON.stringify(pathToFileURL(resolve(dir, 'index.js')).href)});
  newId();
  console.log(performance.now() - start);`;

const times = dirs.map(() => []);
for (let run = 0; run < runs; run++) {
  dirs.forEach((dir, i) => {
    times[i].push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(dir)], { encoding: 'utf8' })));
  });
}

const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
const base = median(times[0]);
dirs.forEach((dir, i) => {
  const list = times[i];
  console.log(
    `${dir}: median ${median(list).toFixed(1)} ms, min ${Math.min(...list).toFixed(1)}, ` +
      `max ${Math.max(...list).toFixed(1)} (${runs} runs), ×${(median(list) / base).toFixed(2)}`,
  );
});
