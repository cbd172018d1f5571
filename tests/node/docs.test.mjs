// The docs as a reference: docs/api.md names every option the package reads
// (each key the wasm boundary takes from an options object, src/wasm) and
// does not call a shipped entry point missing; every link from the READMEs
// and docs/ to a heading of a docs/ page (`docs/x.md#anchor`) finds that
// heading (GitHub's anchor rules).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(join(root, path), 'utf8');

function rustFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return rustFiles(path);
    return entry.name.endsWith('.rs') ? [path] : [];
  });
}

/** The option keys the wasm boundary reads: get(options, "x"), host::method(&options, "x"), count(options, "x", …), json("x"), read("x"). */
function optionKeys() {
  const keys = new Set();
  for (const file of rustFiles('src/wasm')) {
    const source = read(file);
    for (const [, key] of source.matchAll(/\b(?:get|host::method|method|count)\(&?options, "([A-Za-z]+)"/g)) keys.add(key);
    for (const [, key] of source.matchAll(/\b(?:json|read)\("([A-Za-z]+)"\)/g)) keys.add(key);
  }
  return [...keys].sort();
}

test('docs/api.md names every option the package reads', () => {
  const keys = optionKeys();
  for (const expected of ['abortGraceMs', 'confirmMode', 'onConfirm', 'toolBudget', 'maxMessageBytes', 'terminalCloseCodes', 'modelContext']) {
    assert.ok(keys.includes(expected), `the scan of src/wasm finds ${expected} (found: ${keys.join(', ')})`);
  }
  const api = read('docs/api.md');
  // Named in backticks (`key`, `key?`, `key?(…)`, `key?: type`) or in a signature ({ key?, … }).
  const named = (key) => new RegExp(`\`${key}\\??[\`(:]|[{,(]\\s*${key}\\??[,:) }]`).test(api);
  assert.deepEqual(keys.filter((key) => !named(key)), [], 'options missing from docs/api.md');
});

test('docs/api.md does not call a shipped entry point missing', () => {
  const api = read('docs/api.md');
  assert.doesNotMatch(api, /not in the package yet|not shipped yet|missing from the package/);
  const { exports } = JSON.parse(read('pkg-template/package.json'));
  for (const subpath of Object.keys(exports).filter((s) => s !== './package.json')) {
    assert.ok(api.includes(`\`${subpath}\``), `docs/api.md lists ${subpath}`);
  }
});

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading.replace(/`/g, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

test('every link to a docs/ heading finds it', () => {
  const sources = ['README.md', 'pkg-template/README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const broken = [];
  let checked = 0;
  for (const source of sources) {
    const text = read(source);
    const dir = source.includes('/') ? source.slice(0, source.lastIndexOf('/') + 1) : '';
    for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*\.md)?#([^)\s]+)\)/g)) {
      const file = target ? join(dir, target) : source;
      if (!file.startsWith('docs/') && file !== source) continue;
      checked++;
      if (!anchors(read(file)).has(decodeURIComponent(anchor))) broken.push(`${source}: ${target ?? ''}#${anchor}`);
    }
  }
  assert.ok(checked > 5, `only ${checked} links checked`);
  assert.deepEqual(broken, []);
});
