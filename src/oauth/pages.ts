import { SCRIPT_PATHS } from './passkey-scripts.js';

/**
 * The sign-in pages, rendered on the server: small, labelled fields, one purpose each. They work
 * without script; the passkey forms alone need it (two scripts from this origin: passkey-scripts.ts).
 * Every value shown is escaped here; forms carry the CSRF field they are given.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The pages' own policy, tighter than the API's: nothing but this page's inline style and scripts
 * from this origin (the passkey forms', which talk to this origin only); forms post here, and the redirects that follow a form may go to a client's address (form-action applies to
 * them in browsers). CSP cannot name an IPv6 address (Chromium reports `http://[::1]:*` as invalid
 * and ignores it), so a browser will not follow an approval to a `[::1]` redirect; apps on the
 * public clients' pattern use `127.0.0.1` (yoto.dev) or `localhost`.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' https: http://127.0.0.1:* http://localhost:*";

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}' +
  'label{display:block;margin:.75rem 0 .25rem}input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem}' +
  'button{font:inherit;padding:.5rem 1rem;margin:.75rem .5rem 0 0}.error{color:#a40000}.muted{color:#555}' +
  'code{font-size:1.4em;letter-spacing:.1em}li code{font-size:1em}ul{padding-left:1.2rem}';

const PASSKEY_SCRIPTS = `<script src="${SCRIPT_PATHS.webauthn}" defer></script><script src="${SCRIPT_PATHS.passkeys}" defer></script>`;

/** `scripts`: the page has a passkey form (passkeyForm), and loads what drives it. */
function page(title: string, body: string, scripts = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} - Cardshelf</title><style>${STYLE}</style>${scripts ? PASSKEY_SCRIPTS : ''}</head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

const errorLine = (message: string | undefined): string => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');

export interface ClientShown {
  clientId: string;
  name?: string;
  /** Nobody registered it: the page says so, and shows the id as sent. */
  unverified: boolean;
  /** Cardshelf's own web app (first-party.ts): the person is signing in to Cardshelf itself, not lending it to an app. */
  firstParty?: boolean;
}

function clientLine(client: ClientShown): string {
  if (client.firstParty) return '';
  const label = client.name ? `${escapeHtml(client.name)} (<code>${escapeHtml(client.clientId)}</code>)` : `<code>${escapeHtml(client.clientId)}</code>`;
  return client.unverified
    ? `<p>The app <strong>${label}</strong> asks to use your Cardshelf account. <strong>Cardshelf has not verified this app</strong>: approve it only if you started this sign-in yourself.</p>`
    : `<p>The app <strong>${label}</strong> asks to use your Cardshelf account.</p>`;
}

/** The email and password form of both sign-ins (an app's, and the account page's). */
function passwordForm(opts: { action: string; csrf: string; email?: string }): string {
  return `<form method="post" action="${escapeHtml(opts.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`;
}

/** Where a passkey form gets its options and sends the browser's answer (JSON, with the CSRF value). */
export interface PasskeyEndpoints {
  options: string;
  verify: string;
  csrf: string;
}

/**
 * A passkey form, driven by the page script (src/oauth/passkey-scripts.ts): hidden until the
 * script finds WebAuthn; what happens is said in the live region after it.
 */
function passkeyForm(mode: 'sign-in' | 'register', endpoints: PasskeyEndpoints, fields: string, button: string): string {
  return `<form id="passkey-form" hidden data-mode="${mode}" data-options="${escapeHtml(endpoints.options)}" data-verify="${escapeHtml(endpoints.verify)}" data-csrf="${escapeHtml(endpoints.csrf)}">
${fields}<button type="submit">${escapeHtml(button)}</button>
</form>
<p id="passkey-status" aria-live="polite"></p>`;
}

/** `passkey`: where its passkey form talks to; none when passkeys cannot work here (an IP address). */
/**
 * `passkey`: where its passkey form talks to; none when passkeys cannot work here (an IP address).
 * `notice`: why the sign-in is asked (again), when it is not the first.
 */
export function signInPage(opts: { action: string; csrf: string; client: ClientShown; email?: string; error?: string; notice?: string; passkey?: PasskeyEndpoints }): string {
  // The heading inside the form: both are shown only where the script can use a passkey.
  const passkey = opts.passkey ? `\n${passkeyForm('sign-in', opts.passkey, '<h2>Or with a passkey</h2>\n', 'Sign in with a passkey')}` : '';
  const notice = opts.notice ? `<p>${escapeHtml(opts.notice)}</p>` : '';
  return page('Sign in', `${errorLine(opts.error)}${clientLine(opts.client)}\n${notice}${passwordForm(opts)}${passkey}`, opts.passkey !== undefined);
}

/** `signOut`: where "Not you? Sign out" leads (the engine's sign-out page). */
export function approvePage(opts: { action: string; csrf: string; client: ClientShown; accountName: string; signOut: string }): string {
  return page(
    'Approve this app?',
    `${clientLine(opts.client)}
<p>Signed in as ${escapeHtml(opts.accountName)}. Approving lets the app read and change your cards and your family's library, until you sign it out.</p>
<form method="post" action="${escapeHtml(opts.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p>Not ${escapeHtml(opts.accountName)}? <a href="${escapeHtml(opts.signOut)}">Sign out</a></p>`,
  );
}

/**
 * The engine's sign-out page, around the form it made (its action and CSRF value, `xsrf`); the
 * button submits it with `logout=yes`, which ends the session.
 */
export function signOutPage(engineForm: string): string {
  return page(
    'Sign out?',
    `<p>Sign out of Cardshelf in this browser? The devices and apps you approved stay signed in; your account page (<a href="/account">/account</a>) signs them out.</p>
${engineForm}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>`,
  );
}

/**
 * The code entry form, with the engine's action and CSRF value (`xsrf`) taken from the form it
 * made, so the field can carry a label.
 */
export function codeEntryPage(engineForm: string, error: string | undefined): string {
  const action = /action="([^"]*)"/.exec(engineForm)?.[1] ?? '';
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(engineForm)?.[1] ?? '';
  const code = /value="([^"]*)"[^>]*name="user_code"/.exec(engineForm)?.[1] ?? '';
  return page(
    'Connect a device',
    `${errorLine(error)}<p>Enter the code the app or device shows you.</p>
<form method="post" action="${action}">
<input type="hidden" name="xsrf" value="${xsrf}">
<label for="user_code">Code</label><input id="user_code" name="user_code" value="${code}" autocomplete="one-time-code" autocapitalize="characters" required>
<button type="submit">Continue</button>
</form>`,
  );
}

export function codeConfirmPage(form: string, client: ClientShown, userCode: string): string {
  return page(
    'Is this your device?',
    `${clientLine(client)}<p>Check that it shows this code:</p><p><code>${escapeHtml(userCode)}</code></p>${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button>`,
  );
}

/** A page that says one thing; `link`, when given, is where to go next (the app, once an account is made). */
export function messagePage(title: string, message: string, link?: { href: string; text: string }): string {
  const next = link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : '';
  return page(title, `<p>${escapeHtml(message)}</p>${next}`);
}

/** Making an account: by an invitation (joining a family) or, with `SIGNUP=open`, by oneself. */
export function newAccountPage(opts: {
  title: string;
  intro: string;
  action: string;
  csrf: string;
  email?: string;
  name?: string;
  error?: string;
}): string {
  return page(
    opts.title,
    `${errorLine(opts.error)}<p>${escapeHtml(opts.intro)}</p>
<form method="post" action="${escapeHtml(opts.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<label for="name">Your name</label><input id="name" name="name" autocomplete="name" required maxlength="200" value="${escapeHtml(opts.name ?? '')}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" aria-describedby="password-rule">
<p id="password-rule" class="muted">At least 10 characters, and not a common or easy one: a few unrelated words work well.</p>
<button type="submit">Make my account</button>
</form>`,
  );
}

/** The account page's own sign-in form. */
export function accountSignInPage(opts: { action: string; csrf: string; email?: string; error?: string }): string {
  return page(
    'Your account',
    `${errorLine(opts.error)}<p>Sign in to see the apps signed in to your Cardshelf account.</p>
${passwordForm(opts)}`,
  );
}

export interface AppShown extends ClientShown {
  grantId: string;
  /** When it was signed in, as text. */
  since: string;
}

export interface PasskeyShown {
  id: string;
  name: string;
  /** When it was added, and last used, as text. */
  added: string;
  lastUsed?: string;
}

/**
 * The account's passkeys, each with a button that removes it, and the form that adds one; or,
 * when the password was not entered in the last few minutes (`confirmAction`), the form that
 * asks for it before either.
 */
function passkeysSection(passkeys: PasskeyShown[], removeAction: string, csrf: string, add: PasskeyEndpoints | undefined, confirmAction: string | undefined): string {
  const removeForm = (p: PasskeyShown): string =>
    confirmAction
      ? ''
      : `\n<form method="post" action="${escapeHtml(removeAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><input type="hidden" name="id" value="${escapeHtml(p.id)}">
<button type="submit" aria-label="Remove the passkey ${escapeHtml(p.name)}">Remove</button>
</form>`;
  const items = passkeys.map(
    (p) => `<li><p>${escapeHtml(p.name)}<br><span class="muted">Added ${escapeHtml(p.added)}; ${p.lastUsed ? `last used ${escapeHtml(p.lastUsed)}` : 'not used yet'}</span></p>${removeForm(p)}</li>`,
  );
  const list = items.length ? `<ul>${items.join('\n')}</ul>` : '<p>You have no passkeys yet.</p>';
  const nameField = '<label for="passkey-name">Passkey name</label><input id="passkey-name" name="name" maxlength="100" required value="Passkey" aria-describedby="passkey-name-hint">\n<p id="passkey-name-hint" class="muted">To tell your passkeys apart, such as the device that holds it.</p>\n';
  const confirm = confirmAction
    ? `<form method="post" action="${escapeHtml(confirmAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<p id="confirm-why">To add or remove a passkey, enter your password again.</p>
<label for="confirm-password">Password</label><input id="confirm-password" name="password" type="password" autocomplete="current-password" required aria-describedby="confirm-why">
<button type="submit">Confirm</button>
</form>`
    : undefined;
  const adding = add ? passkeyForm('register', add, nameField, 'Add a passkey') : '<p class="muted">Passkeys can be added when this server is reached by a domain name (such as localhost), not an IP address.</p>';
  return `<h2>Passkeys</h2>
<p>A passkey signs you in without your password, with this device's screen lock or a security key.</p>
${list}
${confirm ?? adding}`;
}

/** The signed-in apps, each with a button that signs it out; the passkeys. */
export function signedInAppsPage(opts: {
  accountName: string;
  email: string;
  apps: AppShown[];
  revokeAction: string;
  signOutAction: string;
  csrf: string;
  notice?: string;
  passkeys: PasskeyShown[];
  removePasskeyAction: string;
  /** None when passkeys cannot work here (an IP address). */
  addPasskey?: PasskeyEndpoints;
  /** Where to enter the password again, when it is needed before changing passkeys. */
  confirmAction?: string;
}): string {
  const apps = opts.apps.map((app) => {
    const label = app.name ? `${escapeHtml(app.name)} (<code>${escapeHtml(app.clientId)}</code>)` : `<code>${escapeHtml(app.clientId)}</code>`;
    const unverified = app.unverified ? ' <span class="muted">(not verified by Cardshelf)</span>' : '';
    return `<li><p>${label}${unverified}<br><span class="muted">Signed in ${escapeHtml(app.since)}</span></p>
<form method="post" action="${escapeHtml(opts.revokeAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}"><input type="hidden" name="grant" value="${escapeHtml(app.grantId)}">
<button type="submit" aria-label="Sign out ${escapeHtml(app.name ?? app.clientId)}">Sign out this app</button>
</form></li>`;
  });
  const list = apps.length ? `<ul>${apps.join('\n')}</ul>` : '<p>No apps are signed in to your account.</p>';
  const notice = opts.notice ? `<p role="status">${escapeHtml(opts.notice)}</p>` : '';
  return page(
    'Your account',
    `${notice}<p>Signed in as ${escapeHtml(opts.accountName)} (${escapeHtml(opts.email)}).</p>
<h2>Signed-in apps</h2>
${list}
${passkeysSection(opts.passkeys, opts.removePasskeyAction, opts.csrf, opts.addPasskey, opts.confirmAction)}
<h2>Signing out</h2>
<p>Signs this browser out of this page and of the sign-in pages; the apps above stay signed in.</p>
<form method="post" action="${escapeHtml(opts.signOutAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<button type="submit">Sign out</button>
</form>`,
    opts.addPasskey !== undefined && opts.confirmAction === undefined,
  );
}
