// Deliberately wrong (see tsconfig.json here): must NOT type-check.
import { createToolmark } from '@toolmark/bridge-wasm';

const tm = createToolmark();
// A wrong caller: TS2322.
void tm.call('x', {}, { caller: 'robot' });
// @ts-expect-error nothing is wrong on the next line: TS2578 (unused directive)
void tm.call('x', {}, { caller: 'human' });
