// node benches/paths.mjs [pkgDir …]: getPath, setPath and flatten, calls per
// second, for each package directory given (default pkg/), in one process,
// alternating, best of 5 runs of ~0.3 s each: getPath of a 4-segment path,
// setPath of a 4-segment path into a fresh object, flatten of a form-sized
// draft (20 fields, 2 levels). Compare two builds with
//   node benches/paths.mjs /path/to/main/pkg pkg
// Prints numbers only.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dirs = process.argv.slice(2);
if (dirs.length === 0) dirs.push('pkg');
const packages = [];
for (const dir of dirs) {
  packages.push({ dir, ...(await import(`${pathToFileURL(resolve(dir) + '/').href}index.js`)) });
}

const value = { order: { items: [{ name: 'tea', qty: 2 }, { name: 'milk', qty: 1 }] } };
const draft = {};
for (let i = 0; i < 10; i++) draft[`field${i}`] = { value: `v${i}`, touched: i % 2 === 0 };

const cases = {
  getPath: (m) => m.getPath(value, 'order.items.1.name'),
  setPath: (m) => m.setPath({}, 'order.items.0.name', 'tea'),
  flatten: (m) => m.flatten(draft),
};

function rate(m, run) {
  let n = 0;
  const end = performance.now() + 300;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) run(m);
    n += 100;
  }
  return n / 0.3;
}

const best = new Map();
for (let round = 0; round < 5; round++) {
  for (const m of packages) {
    for (const [name, run] of Object.entries(cases)) {
      const key = `${m.dir}\t${name}`;
      best.set(key, Math.max(best.get(key) ?? 0, rate(m, run)));
    }
  }
}
console.log(['case', ...dirs].join('\t'));
for (const name of Object.keys(cases)) {
  const row = dirs.map((dir) => Math.round(best.get(`${dir}\t${name}`)));
  const ratio = row.length > 1 ? `\t${(row[row.length - 1] / row[0]).toFixed(2)}×` : '';
  console.log(`${name}\t${row.join('\t')}${ratio}`);
}
