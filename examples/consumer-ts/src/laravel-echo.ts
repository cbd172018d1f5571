// echoTransport with the real Laravel Echo class (laravel-echo 2.x, Reverb).
// Checked under moduleResolution "bundler" only: the types of laravel-echo /
// pusher-js do not resolve under NodeNext (TS2709 in laravel-echo's echo.d.ts).
import { createToolmark, newId } from '@toolmark/bridge-wasm';
import { bridge } from '@toolmark/bridge-wasm/bridge';
import { echoTransport } from '@toolmark/bridge-wasm/bridge/echo';
import Echo from 'laravel-echo';

declare const userId: number;
declare const conversationId: string;

const xsrfToken = (): string => decodeURIComponent(document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/)?.[1] ?? '');

export function attachEcho(): () => void {
  const echo = new Echo({ broadcaster: 'reverb', key: 'app-key', wsHost: location.hostname, forceTLS: true });
  const tm = createToolmark();
  return tm.use(
    bridge({
      transport: echoTransport({
        echo,
        channel: `toolmark.${userId}.${conversationId}`,
        event: '.toolmark.message',
        postUrl: '/toolmark/bridge',
        headers: () => ({ 'X-XSRF-TOKEN': xsrfToken() }),
      }),
    }),
  );
}

const pusherEcho = new Echo({ broadcaster: 'pusher', key: 'app-key', cluster: 'eu', forceTLS: true });
echoTransport({ echo: pusherEcho, channel: `toolmark.1.${newId()}` });
