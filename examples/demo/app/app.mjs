// The demo page: a sign-up form offered to the agent with formTools, a chat
// with the server's agent, and the pending confirmations a person decides.
// Query parameters: `user=NAME` signs in without the form;
// `confirmExpiryMs=N` shortens how long a confirmation waits;
// `echo=KEY@HOST:PORT` uses the server's Echo mode (echoTransport over
// Laravel Echo and pusher-js, a Pusher-protocol server such as soketi at
// HOST:PORT with app key KEY) instead of the bridge WebSocket.
import { createToolmark, formTools } from './pkg/index.js';
import { bridge } from './pkg/bridge/index.js';
import { websocketTransport } from './pkg/bridge/websocket.js';
import { echoTransport } from './pkg/bridge/echo.js';

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const element = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const expiryMs = Number(params.get('confirmExpiryMs'));
const tm = createToolmark({
  ...(expiryMs > 0 ? { confirmExpiryMs: expiryMs } : {}),
  onError: (error) => console.warn('toolmark:', error.code, error.message),
});

// ---- the form -----------------------------------------------------------
const signup = $('signup');
// Email, name and a password of 8 or more characters are required (the
// inputs' constraints): an invalid form is never submitted, by the person or
// by the agent's submit tool, which answers with the fields at fault.
signup.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!signup.checkValidity()) return;
  const data = new FormData(signup);
  $('account').textContent = `Account created for ${data.get('email')} on the ${data.get('plan')} plan.`;
});
formTools(signup, { scope: tm.scope('signup'), sensitive: ['password'] });

// ---- the pending confirmations ---------------------------------------------
const time = (ms) => new Date(ms).toLocaleTimeString();

function renderPending() {
  const pending = tm.pendingConfirmations();
  $('no-pending').hidden = pending.length > 0;
  $('pending').replaceChildren(
    ...pending.map(({ confirmId, tool, summary, changes = [], expiresAt }) => {
      const decide = (approve) => () => {
        for (const button of item.querySelectorAll('button')) button.disabled = true;
        tm.confirmPending(confirmId, approve).catch((error) => console.warn('confirm:', error));
      };
      const rows = changes.map(({ path, after }) =>
        element('tr', {}, element('td', { textContent: path }), element('td', { textContent: JSON.stringify(after ?? null) })),
      );
      const item = element(
        'li',
        { className: 'confirmation' },
        element('strong', { textContent: summary }),
        element('div', { className: 'muted', textContent: `${tool} · expires at ${time(expiresAt)}` }),
        rows.length ? element('table', {}, element('tbody', {}, ...rows)) : '',
        element(
          'div',
          { className: 'buttons' },
          element('button', { className: 'approve', type: 'button', textContent: 'Approve', onclick: decide(true) }),
          element('button', { className: 'reject', type: 'button', textContent: 'Reject', onclick: decide(false) }),
        ),
      );
      item.dataset.confirmId = confirmId;
      return item;
    }),
  );
}
tm.subscribePending(renderPending);
renderPending();

// ---- the chat -----------------------------------------------------------
function describeEntry(entry) {
  const outcome = (o = {}) => [o.status, o.code].filter(Boolean).join(' ');
  switch (entry.kind) {
    case 'user':
    case 'agent':
      return entry.text;
    case 'tool': {
      const { tool, input } = entry.input ?? {};
      return `${entry.name} ${tool ?? ''}${input ? ` ${JSON.stringify(input)}` : ''} → ${outcome(entry.outcome)}`;
    }
    case 'confirmation':
      return `confirmation of ${entry.tool}: ${outcome(entry.outcome)}`;
    default:
      return JSON.stringify(entry);
  }
}

const renderEntry = (entry) => element('li', { className: entry.kind, textContent: describeEntry(entry) });

function socketUrl(path, conversation) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('conversation', conversation);
  return url.href;
}

function openChat(conversation) {
  const transcript = $('transcript');
  const say = $('say');
  const controls = [...say.elements];
  let socket;
  const connect = () => {
    socket = new WebSocket(socketUrl('/chat/ws', conversation));
    socket.addEventListener('open', () => controls.forEach((c) => (c.disabled = false)));
    socket.addEventListener('message', ({ data }) => {
      const frame = JSON.parse(data);
      if (frame.type === 'page') {
        $('page-tools').dataset.clientId = frame.clientId ?? '';
        $('page-tools').textContent = frame.tools.length
          ? `The agent can use this page's tools: ${frame.tools.join(', ')}.`
          : 'The agent sees no tools on this page yet.';
      }
      if (frame.type === 'history') transcript.replaceChildren(...frame.entries.map(renderEntry));
      if (frame.type === 'entry') transcript.append(renderEntry(frame.entry));
      transcript.lastElementChild?.scrollIntoView({ block: 'nearest' });
    });
    socket.addEventListener('close', () => {
      controls.forEach((c) => (c.disabled = true));
      setTimeout(connect, 1000);
    });
  };
  connect();
  say.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = say.elements.text.value.trim();
    if (!text || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: 'say', text }));
    say.elements.text.value = '';
  });
}

// ---- the bridge's transport ------------------------------------------------
const cookie = (name) =>
  document.cookie.split('; ').find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';

function loadScript(src) {
  return new Promise((resolve, reject) => {
    document.head.append(element('script', { src, onload: resolve, onerror: () => reject(new Error(`cannot load ${src}`)) }));
  });
}

async function transportFor(user, conversation) {
  const echoServer = params.get('echo')?.match(/^([^@]+)@(.+):(\d+)$/);
  if (!echoServer) return websocketTransport({ url: socketUrl('/toolmark/ws', conversation) });
  const [, key, wsHost, wsPort] = echoServer;
  // laravel-echo's pusher connector takes pusher-js from window.Pusher.
  await loadScript('vendor/pusher.js');
  const { default: Echo } = await import('./vendor/echo.js');
  const echo = new Echo({
    broadcaster: 'pusher',
    key,
    cluster: 'mt1',
    wsHost,
    wsPort: Number(wsPort),
    forceTLS: false,
    enabledTransports: ['ws'],
    disableStats: true,
    authEndpoint: '/broadcasting/auth',
  });
  return echoTransport({
    echo,
    channel: `toolmark.${user}.${conversation}`,
    postUrl: `/toolmark/bridge?conversation=${encodeURIComponent(conversation)}`,
    headers: () => ({ 'X-XSRF-TOKEN': decodeURIComponent(cookie('XSRF-TOKEN')) }),
  });
}

// ---- the connection -------------------------------------------------------
// The bridge tells its transport's state: an agent that cannot be reached
// shows here (and as a transport_failed error), not as a silent page.
function describeConnection(status) {
  switch (status.state) {
    case 'connecting':
      return `connecting${status.attempt > 1 ? ` (attempt ${status.attempt})` : ''}…`;
    case 'open':
      return 'connected';
    case 'reconnecting':
      return `offline, trying again${status.delayMs === undefined ? '' : ` in ${(status.delayMs / 1000).toFixed(1)} s`} (attempt ${status.attempt})`;
    default:
      return `closed${status.code === undefined ? '' : ` (${status.code}${status.reason ? `: ${status.reason}` : ''})`}${status.terminal ? '' : ', will retry'}`;
  }
}
tm.events.on('status', (status) => {
  $('connection').textContent = `Agent connection: ${describeConnection(status)}`;
  $('connection').dataset.state = status.state;
});

// ---- the session ----------------------------------------------------------
async function login(user) {
  const response = await fetch('/api/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user }),
  });
  if (!response.ok) throw new Error(`login: ${response.status}`);
  return response.json();
}

function askForLogin() {
  const form = $('login');
  form.hidden = false;
  return new Promise((resolve) => {
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        resolve(await login(form.elements.user.value));
        form.hidden = true;
      } catch {
        form.elements.user.setCustomValidity('1–32 letters, digits, _ or -');
        form.reportValidity();
      }
    });
    form.elements.user.addEventListener('input', () => form.elements.user.setCustomValidity(''));
  });
}

// A reloaded page re-opens the newest conversation of its session cookie.
async function session() {
  const response = await fetch('/api/session');
  if (response.status === 200) return response.json(); // 204: not signed in yet
  const user = params.get('user');
  return user ? login(user) : askForLogin();
}

const { user, conversation } = await session();
$('who').hidden = false;
$('who').textContent = `Signed in as ${user} · conversation ${conversation}`;
tm.use(bridge({ transport: await transportFor(user, conversation) }));
openChat(conversation);
