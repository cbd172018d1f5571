// usePendingConfirmations(tm): the live list of pending deferred
// confirmations, with approve and reject (React is an optional peer).
// JS because it is a React hook: it only subscribes to the core's registry.
import { useCallback, useSyncExternalStore } from 'react';
import { ToolmarkError } from '../errors.js';

const EMPTY = [];

export function usePendingConfirmations(tm) {
  if (!tm || typeof tm.subscribePending !== 'function') {
    throw new ToolmarkError('invalid_argument', 'usePendingConfirmations: pass the registry from createToolmark()');
  }
  const cache = useCallback(() => {
    // A stable snapshot between changes, as useSyncExternalStore requires.
    const list = tm.pendingConfirmations();
    const key = JSON.stringify(list);
    if (cache.key !== key) {
      cache.key = key;
      cache.value = list.length ? list : EMPTY;
    }
    return cache.value;
  }, [tm]);
  const subscribe = useCallback((listener) => tm.subscribePending(listener), [tm]);
  const pending = useSyncExternalStore(subscribe, cache, cache);
  const approve = useCallback((confirmId) => tm.confirmPending(confirmId, true), [tm]);
  const reject = useCallback((confirmId) => tm.confirmPending(confirmId, false), [tm]);
  return { pending, approve, reject };
}
