// npm run size: raw, gzip (level 9) and brotli (quality 11) sizes of every
// file shipped in pkg/, and the total of what the size budget counts: all
// shipped .js and .wasm except the React entry, without .d.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const rows = walk(pkg).sort().map((path) => {
  const data = readFileSync(path);
  return {
    file: relative(pkg, path),
    raw: data.length,
    gzip: gzipSync(data, { level: 9 }).length,
    brotli: brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }).length,
  };
});

const counted = (row) =>
  /\.(js|wasm)$/.test(row.file) && !row.file.endsWith('.d.ts') && !row.file.startsWith('react');
const sum = (list, key) => list.reduce((total, row) => total + row[key], 0);
const pad = (value, width) => String(value).padStart(width);
const width = Math.max(...rows.map((row) => row.file.length), 28);

console.log(`${'file'.padEnd(width)} ${pad('raw', 9)} ${pad('gzip', 9)} ${pad('brotli', 9)}`);
for (const row of rows) {
  console.log(`${row.file.padEnd(width)} ${pad(row.raw, 9)} ${pad(row.gzip, 9)} ${pad(row.brotli, 9)}`);
}
const budget = rows.filter(counted);
for (const [label, list] of [['total (all files)', rows], ['budget (.js + .wasm, no react)', budget]]) {
  console.log(`${label.padEnd(width)} ${pad(sum(list, 'raw'), 9)} ${pad(sum(list, 'gzip'), 9)} ${pad(sum(list, 'brotli'), 9)}`);
}
console.log(`budget gzip: ${(sum(budget, 'gzip') / 1000).toFixed(1)} KB of 100 KB`);
