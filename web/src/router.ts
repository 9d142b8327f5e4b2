import { signal } from '@preact/signals';

/**
 * The app's few pages by path, under /app/ (the server answers index.html for any of them). A
 * signal holds the path; links call navigate(); the browser's back and forward update it.
 */
export const BASE = '/app';
export const path = signal(location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/');

/**
 * Asked before the app leaves the page shown for `to`: false keeps the page (unsaved edits, say).
 * A guard with nothing to ask answers at once (true), so a move it lets go is not delayed.
 */
export type LeaveGuard = (to: string) => boolean | Promise<boolean>;
const guards = new Set<LeaveGuard>();

/** Adds a guard while a page needs one; the function returned removes it. */
export function guardLeaving(guard: LeaveGuard): () => void {
  guards.add(guard);
  return () => void guards.delete(guard);
}

function mayLeave(to: string): true | Promise<boolean> {
  const answers = [...guards].map((guard) => guard(to));
  return answers.every((a) => a === true) ? true : Promise.all(answers.map(async (a) => a)).then((all) => all.every(Boolean));
}

/** `within`: a move within the page shown (a library group chosen by its tab): focus stays where it is. */
function show(to: string, replace: boolean, within = false): void {
  const url = `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  path.value = to;
  // A new page: focus its heading, so screen readers and keyboards start there.
  if (!within) queueMicrotask(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

export function navigate(to: string, replace = false, within = false): void {
  const may = mayLeave(to);
  if (may === true) return show(to, replace, within);
  void may.then((yes) => yes && show(to, replace, within));
}

addEventListener('popstate', () => {
  const to = location.pathname.slice(BASE.length) || '/';
  const may = mayLeave(to);
  if (may === true) return void (path.value = to);
  // The browser has moved its address already: the page's own is put back while a guard asks (one
  // entry more in the history), and replaced by the one asked for if the person leaves.
  history.pushState(null, '', `${BASE}${path.value}`);
  void may.then((yes) => yes && show(to, true));
});

/** For a link's onClick: an ordinary click navigates in the app; a modified one opens as the browser does. */
export function follow(event: MouseEvent, to: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(to);
}
