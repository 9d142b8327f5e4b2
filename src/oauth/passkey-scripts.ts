import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The pages' two scripts, the only ones they load (PAGE_CSP allows scripts from this origin,
 * none inline): @simplewebauthn/browser's own bundle (it turns the server's JSON options into
 * navigator.credentials calls and the answers back into JSON: base64url and buffers, which is
 * what it is for), and PASSKEY_SCRIPT below, which drives the passkey form of the page.
 */
export const SCRIPT_PATHS = { webauthn: '/sign-in/webauthn.js', passkeys: '/sign-in/passkeys.js' } as const;

/**
 * The passkey form (`#passkey-form`, hidden until this runs, so a browser without script or
 * without WebAuthn never shows a button that cannot work): on submit it asks `data-options` for
 * options, has the browser make or use a passkey, sends the answer to `data-verify` and follows
 * the `location` it is given. What happens is said in `#passkey-status`, a live region.
 */
const PASSKEY_SCRIPT = `(() => {
  'use strict';
  const form = document.getElementById('passkey-form');
  const status = document.getElementById('passkey-status');
  if (!form || !status) return;
  const webauthn = window.SimpleWebAuthnBrowser;
  const say = (text, isError) => {
    status.textContent = text;
    status.className = isError ? 'error' : '';
  };
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) {
    say('This browser cannot use passkeys here.', false);
    return;
  }
  form.hidden = false;
  const post = async (url, body) => {
    const answer = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new Error((json.error && json.error.message) || 'the server answered ' + answer.status);
    return json;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    const making = form.dataset.mode === 'register';
    const nameField = form.querySelector('input[name=name]');
    button.disabled = true;
    try {
      say(making ? 'Follow your browser to make the passkey.' : 'Follow your browser to use your passkey.', false);
      const csrf = form.dataset.csrf;
      const optionsJSON = await post(form.dataset.options, { csrf });
      const response = making ? await webauthn.startRegistration({ optionsJSON }) : await webauthn.startAuthentication({ optionsJSON });
      const done = await post(form.dataset.verify, { csrf, response, name: nameField ? nameField.value : undefined });
      say(making ? 'Passkey added.' : 'Signed in.', false);
      window.location.assign(done.location);
    } catch (err) {
      const cancelled = err && err.name === 'NotAllowedError';
      say(cancelled ? 'No passkey was used: it was cancelled or took too long. Try again.' : 'That did not work: ' + (err && err.message), true);
      button.disabled = false;
      button.focus();
    }
  });
})();
`;

/** The library's browser bundle (a UMD file that sets window.SimpleWebAuthnBrowser), read once. */
function webauthnBundle(): string {
  const require = createRequire(import.meta.url);
  // The package exports its module entry only; the bundle sits beside it, in the package's dist/.
  const entry = require.resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

export function serveSignInScripts(app: FastifyInstance): void {
  const bundle = webauthnBundle();
  const send = (body: string) => async (_request: unknown, reply: FastifyReply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(body);
  app.get(SCRIPT_PATHS.webauthn, { schema: { hide: true } }, send(bundle));
  app.get(SCRIPT_PATHS.passkeys, { schema: { hide: true } }, send(PASSKEY_SCRIPT));
}
