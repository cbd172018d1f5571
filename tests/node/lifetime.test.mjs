// A registry the app lets go of is collected and stays quiet: found by the
// soak (benches/soak.mjs), which reloads pages by dropping registries. Each
// case runs in a child process with --expose-gc, where the collector can be
// made to run, and where an exception thrown by a timer ends the process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const pkg = new URL('../../pkg/', import.meta.url).href;

/** Runs `body` (an ES module's text, with `createToolmark`, `bridge`, `createInPageChannel`, `collect()` in scope). */
function child(body) {
  const source = `
    import { createToolmark } from '${pkg}index.js';
    import { bridge } from '${pkg}bridge/index.js';
    import { createInPageChannel } from '${pkg}bridge/in-page.js';
    const pause = (ms) => new Promise((r) => setTimeout(r, ms));
    let collected = 0;
    const watched = new FinalizationRegistry(() => collected++);
    /** Collects, gives the finalizers their turn, and says how many watched objects went. */
    async function collect() {
      for (let i = 0; i < 6; i++) {
        globalThis.gc();
        await pause(20);
      }
      return collected;
    }
    ${body}
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', source], { encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, out: run.stdout.trim(), err: run.stderr };
}

test('a registry collected while a confirmation is pending does not throw when its expiry was due', () => {
  const { status, out, err } = child(`
    async function page() {
      const tm = createToolmark({ confirmExpiryMs: 300 });
      watched.register(tm, 0);
      tm.register({ name: 'pay', description: 'Pays', hints: { consequential: true }, run: () => 1 });
      const { transport, agent } = createInPageChannel();
      const detach = tm.use(bridge({ transport }));
      while (!agent.clientId) await pause(1);
      const result = await agent.call('pay', {});
      detach();
      return result.status + ' ' + tm.pendingConfirmations().length;
    }
    console.log(await page());
    console.log('collected', await collect());
    await pause(600);
    console.log('still running');
  `);
  assert.equal(err.includes('closure invoked'), false, err);
  assert.equal(status, 0, err);
  assert.deepEqual(out.split('\n'), ['needs_confirmation 1', 'collected 1', 'still running']);
});

test('a registry collected while its bridge is attached lets go of the transport: the agent’s next messages do not throw', () => {
  const { status, out, err } = child(`
    // The app keeps neither the registry nor the function use() returned;
    // the agent end (and with it the transport) lives on.
    async function page() {
      const tm = createToolmark();
      watched.register(tm, 0);
      tm.register({ name: 't', description: 'd', run: () => 1 });
      const { transport, agent } = createInPageChannel();
      tm.use(bridge({ transport }));
      while (!agent.clientId) await pause(1);
      return agent;
    }
    const agent = await page();
    const answers = [];
    agent.onMessage((m) => answers.push(m.type));
    console.log('collected', await collect());
    for (let i = 0; i < 50; i++) agent.send({ protocol: 1, type: 'describe', clientId: agent.clientId, id: 'd' + i, tool: 't' });
    await pause(50);
    console.log('answers', answers.length);
  `);
  assert.equal(err.includes('closure invoked'), false, err);
  assert.equal(status, 0, err);
  assert.deepEqual(out.split('\n'), ['collected 1', 'answers 0']);
});

test('a run’s ctx kept past its registry answers as a registry that is gone: confirm false, files.resolve files_not_configured; a late send failure is quiet', () => {
  const { status, out, err } = child(`
    let rejectSend;
    async function page() {
      const tm = createToolmark({ onConfirm: () => true });
      watched.register(tm, 0);
      let kept;
      tm.register({ name: 'keep', description: 'd', run: (input, ctx) => { kept = ctx; return 1; } });
      await tm.call('keep', {});
      // A transport whose send settles after the page let go of the registry.
      const transport = {
        send: () => new Promise((resolve, reject) => (rejectSend = reject)),
        onMessage: () => () => {},
      };
      tm.use(bridge({ transport }));
      return kept;
    }
    process.on('unhandledRejection', (error) => console.log('unhandled', String(error)));
    const ctx = await page();
    console.log('collected', await collect());
    console.log('confirm', await ctx.confirm('Again?'));
    try {
      ctx.files.resolve('x');
    } catch (error) {
      console.log('files', error.name, error.code);
    }
    rejectSend(new Error('network down'));
    await pause(20);
  `);
  assert.equal(err.includes('closure invoked'), false, err);
  assert.equal(status, 0, err);
  assert.deepEqual(out.split('\n'), ['collected 1', 'confirm false', 'files ToolmarkError files_not_configured']);
});

test('an unsubscribed listener that refers to its registry does not keep it alive', () => {
  const { status, out, err } = child(`
    // The natural way: the page keeps the unsubscribe functions, and its
    // listeners refer to the page.
    function page() {
      const tm = createToolmark();
      watched.register(tm, 0);
      const app = { tm };
      app.offPending = tm.subscribePending(() => app.tm.pendingConfirmations());
      app.offError = tm.events.on('error', () => app.tm.rev);
      return app;
    }
    function pages() {
      for (let i = 0; i < 50; i++) {
        const app = page();
        app.offPending();
        app.offError();
      }
    }
    pages();
    console.log('collected', await collect());
  `);
  assert.equal(status, 0, err);
  assert.equal(out, 'collected 50');
});

test('an agent request that timed out lets go of its error, its timer and its channel', () => {
  // Found by the soak (its JS heap grew about 1.7 KB per timed-out
  // agent.call): the timeout error's stack refers to the timer, the timer to
  // the function it fired, that function (kept by the module) to the
  // promise's reject, and the promise to the error.
  const { status, out, err } = child(`
    const slow = (input, ctx) => new Promise((done) => {
      const timer = setTimeout(done, 50);
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); done(); });
    });
    const tm = createToolmark();
    tm.register({ name: 'slow', description: 'Takes 50 ms', run: slow });
    const { transport, agent } = createInPageChannel();
    tm.use(bridge({ transport }));
    while (!agent.clientId) await pause(1);
    // describes on a channel no page listens to: never answered.
    const unattached = createInPageChannel().agent;
    // In a function of its own: a suspended async function keeps its
    // registers, the last request among them.
    async function timeouts() {
      let timedOut = 0;
      for (let i = 0; i < 40; i++) {
        const request = i % 2 ? agent.call('slow', {}, { timeoutMs: 1 }) : unattached.describe('slow', { timeoutMs: 1 });
        await request.then(() => {}, (error) => {
          if (error.code !== 'timeout') throw error;
          timedOut++;
          watched.register(error, i);
        });
      }
      return timedOut;
    }
    const timedOut = await timeouts();
    await pause(100);
    console.log('timed out', timedOut);
    console.log('collected', await collect());
  `);
  assert.equal(status, 0, err);
  assert.deepEqual(out.split('\n'), ['timed out 40', 'collected 40']);
});
