import { render } from 'preact';
import { App } from './app.js';
import { finishSignIn } from './auth.js';
import { followLiveEvents } from './events.js';
import { BASE, navigate, path } from './router.js';
import { messages } from './messages.js';
import { OfflineNotice } from './offline.js';

/** The sign-in's way back (/app/callback) is handled before the app shows anything. */
async function start(): Promise<void> {
  const root = document.getElementById('root')!;
  if (path.value === '/callback') {
    try {
      navigate(await finishSignIn(new URLSearchParams(location.search)), true);
    } catch (err) {
      history.replaceState(null, '', `${BASE}/`);
      path.value = '/';
      sessionStorage.setItem('cardshelf:sign-in-error', messages.signIn.failed((err as Error).message));
    }
  }
  render(
    <>
      <OfflineNotice />
      <App />
    </>,
    root,
  );
  followLiveEvents();
}

void start();
