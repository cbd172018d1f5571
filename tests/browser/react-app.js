// A React page using usePendingConfirmations, bundled by esbuild for the Chromium test.
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createToolmark } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';
import { usePendingConfirmations } from '../../pkg/react/index.js';

const tm = createToolmark();
tm.register({
  name: 'pay',
  title: 'Pay the invoice',
  description: 'Pays an invoice',
  hints: { consequential: true },
  summary: (input) => `Pay ${input.amount} EUR`,
  run: (input) => ({ paid: input.amount }),
});
const { transport, agent } = createInPageChannel();
window.confirmed = [];
agent.onConfirmed((m) => window.confirmed.push(m.result));
tm.use(bridge({ transport }));

function Pending() {
  const { pending, approve, reject } = usePendingConfirmations(tm);
  const [last, setLast] = useState(null);
  return h(
    'div',
    null,
    h('p', { id: 'count' }, `${pending.length} pending`),
    h('p', { id: 'last' }, last ? JSON.stringify(last) : ''),
    h(
      'ul',
      null,
      pending.map((p) =>
        h(
          'li',
          { key: p.confirmId, 'data-id': p.confirmId },
          h('span', { className: 'summary' }, p.summary),
          h('button', { className: 'approve', onClick: async () => setLast(await approve(p.confirmId)) }, 'Approve'),
          h('button', { className: 'reject', onClick: async () => setLast(await reject(p.confirmId)) }, 'Reject'),
        ),
      ),
    ),
  );
}

createRoot(document.getElementById('root')).render(h(Pending));
Object.assign(window, { tm, agent });
