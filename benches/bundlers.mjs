// node benches/bundlers.mjs [pkgDir] [--bundlers vite,esbuild] [--apps readme,constants]:
// issue 30's size table. Each app of tests/packaging/bundlers/apps/ (the README's
// app, the protocol constants alone, the in-page channel alone, every export of
// every entry, and the README's app on the peer @mcp-b/global) built for
// production by each bundler of the matrix (and loaded through an import map),
// opened in headless Chromium to check it runs, and everything it ships
// measured: every emitted .js/.mjs/.wasm file and every other file the page
// fetched, raw, gzip -9 and brotli 11 (each file compressed on its own, as
// served). Prints markdown tables; asserts nothing. The harness is the test's
// (tests/node/support/bundlers.mjs), the bundlers cached the same way.
import { relative, resolve } from 'node:path';
import { launchChromium } from '../tests/node/support/browser.mjs';
import {
  APPS, BUNDLERS, SIZE_LIMITS, UNSUPPORTED, VERSIONS, buildApp, kb, measure, openPage, prepareProject, serveOutput, shipped, startAgent,
} from '../tests/node/support/bundlers.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args.splice(at, 2)[1].split(',');
};
const bundlers = option('--bundlers') ?? Object.keys(BUNDLERS);
const apps = option('--apps') ?? APPS;
const pkgDir = resolve(args[0] ?? 'pkg');

const project = await prepareProject({ pkgDir, bundlers, log: (line) => console.error(line) });
const browser = await launchChromium();
const agent = await startAgent();
const results = []; // { app, bundler, size?, fetched?, warnings, problems, error? }

try {
  for (const app of apps) {
    for (const bundler of bundlers) {
      const row = { app, bundler, warnings: [], problems: [] };
      results.push(row);
      const unsupported = UNSUPPORTED[bundler]?.[app];
      if (unsupported) {
        row.error = unsupported;
        continue;
      }
      let build;
      try {
        build = await buildApp(project, bundler, app);
      } catch (error) {
        row.error = `build failed: ${error.message.split('\n').find((line) => /error|failed to/i.test(line)) ?? error.message.split('\n')[0]}`;
        continue;
      }
      row.warnings = build.warnings;
      const server = await serveOutput(project, build.out);
      let page;
      try {
        const from = agent.messages.length;
        page = await openPage(browser, server, `/index.html?ws=${encodeURIComponent(agent.url)}`);
        // Ran: the README app sent its manifest; the others set their title.
        await (app === 'readme'
          ? agent.next('manifest', { from })
          : page.waitForFunction(() => document.title === 'done', null, { timeout: 15_000 }));
        row.problems = page.problems;
      } catch (error) {
        row.problems = [...(page?.problems ?? []), error.message.split('\n')[0]];
      } finally {
        await page?.close().catch(() => {});
        await server.close();
      }
      row.size = measure(shipped(build, server.fetched));
      row.fetched = measure([...server.fetched].filter((file) => !file.endsWith('.html')));
      console.error(`${app} ${bundler}: ${kb(row.size.gzip)} KB gzip${row.problems.length ? ' (did not run cleanly)' : ''}`);
    }
  }
} finally {
  await agent.close();
  await browser.close();
  project.close();
}

const cell = (size, key) => (size ? kb(size[key]) : '—');
const kinds = (size) => {
  const count = {};
  for (const { file } of size.files) count[file.split('.').pop()] = (count[file.split('.').pop()] ?? 0) + 1;
  return Object.entries(count).map(([ext, n]) => `${n} ${ext}`).join(' + ');
};
const peerGzip = (bundler) => results.find((r) => r.app === 'peer' && r.bundler === bundler)?.size?.gzip;

console.log(`\n@toolmark/bridge-wasm ${project.package.version} from ${relative(process.cwd(), pkgDir) || '.'}, node ${process.version}`);
console.log(
  `bundlers: ${bundlers.map((b) => BUNDLERS[b].label).join(', ')}; peer @mcp-b/global ${VERSIONS['@mcp-b/global']}; ` +
    `issue 30's figures: constants ≤ ${kb(SIZE_LIMITS.constantsGzip)} KB gzip, README app ≤ ${kb(SIZE_LIMITS.readmeGzip)} KB gzip\n`,
);
console.log(
  'Everything shipped (KB = 1000 bytes; each file compressed on its own; "fetched": what the page loaded of it; ' +
    `"everything" includes React and react-dom ${VERSIONS.react}, which the React hook needs):\n`,
);
console.log('| app | bundler | files | raw | gzip -9 | brotli 11 | fetched gzip | gzip × the peer |');
console.log('|---|---|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  // The peer is the README's app on @mcp-b/global: the ratio is for that app.
  const ratio = r.size && r.app === 'readme' && peerGzip(r.bundler) ? `${(r.size.gzip / peerGzip(r.bundler)).toFixed(2)}×` : '';
  const files = r.size ? kinds(r.size) : r.error;
  console.log(
    `| ${r.app} | ${BUNDLERS[r.bundler].label} | ${files} | ${cell(r.size, 'raw')} | ${cell(r.size, 'gzip')} | ${cell(r.size, 'brotli')} | ${cell(r.fetched, 'gzip')} | ${ratio} |`,
  );
}

console.log('\ngzip -9 (KB), app × bundler:\n');
console.log(`| app | ${bundlers.map((b) => BUNDLERS[b].label).join(' | ')} |`);
console.log(`|---|${bundlers.map(() => '---:').join('|')}|`);
for (const app of apps) {
  const cells = bundlers.map((bundler) => cell(results.find((r) => r.app === app && r.bundler === bundler)?.size, 'gzip'));
  console.log(`| ${app} | ${cells.join(' | ')} |`);
}

const notes = results.flatMap((r) => [
  ...(r.warnings.length ? [`${r.app}, ${r.bundler}: warns: ${r.warnings[0].trim()}${r.warnings.length > 1 ? ` (+${r.warnings.length - 1} lines)` : ''}`] : []),
  ...r.problems.map((line) => `${r.app}, ${r.bundler}: did not run cleanly: ${line}`),
  ...(r.error && !r.size ? [`${r.app}, ${r.bundler}: not measured: ${r.error}`] : []),
]);
if (notes.length) console.log(`\n${notes.map((note) => `- ${note}`).join('\n')}`);
