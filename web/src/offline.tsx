import { signal } from '@preact/signals';
import { messages } from './messages.js';
import './offline.css';

/** The browser's word on the network; a page served by the service worker without one starts false. */
const online = signal(navigator.onLine);
addEventListener('online', () => (online.value = true));
addEventListener('offline', () => (online.value = false));

/** Says so while the browser is offline: the app's shell still opens (its service worker), its data does not. */
export function OfflineNotice() {
  return online.value ? null : (
    <p role="status" class="offline-notice">
      {messages.offline.notice}
    </p>
  );
}
