// A React form of controlled inputs with formTools on it, bundled by esbuild
// for the Chromium test: what the app submits is the state React keeps.
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { flushSync } from 'react-dom';
import { createToolmark, formTools } from '../../pkg/index.js';
import { bridge } from '../../pkg/bridge/index.js';
import { createInPageChannel } from '../../pkg/bridge/in-page.js';

window.submitted = [];
function Signup() {
  const [email, setEmail] = useState('');
  const [agree, setAgree] = useState(false);
  const [plan, setPlan] = useState('free');
  const [size, setSize] = useState('s');
  const radio = (value) =>
    h('input', { type: 'radio', name: 'size', value, checked: size === value, onChange: (e) => setSize(e.target.value) });
  return h(
    'form',
    {
      id: 'signup',
      'aria-label': 'signup',
      onSubmit: (e) => {
        e.preventDefault();
        window.submitted.push({ email, agree, plan, size });
      },
    },
    h('input', { name: 'email', value: email, onChange: (e) => setEmail(e.target.value) }),
    h('input', { name: 'agree', type: 'checkbox', checked: agree, onChange: (e) => setAgree(e.target.checked) }),
    h('select', { name: 'plan', value: plan, onChange: (e) => setPlan(e.target.value) }, h('option', { value: 'free' }, 'Free'), h('option', { value: 'pro' }, 'Pro')),
    radio('s'),
    radio('m'),
  );
}
const root = createRoot(document.getElementById('root'));
flushSync(() => root.render(h(Signup)));
const tm = createToolmark();
const { transport, agent } = createInPageChannel();
tm.use(bridge({ transport }));
formTools(document.getElementById('signup'), { scope: tm.scope('f') });
Object.assign(window, { tm, agent });
