import { signal } from '@preact/signals';

/**
 * The app's few pages by path, under /app/ (the server answers index.html for any of them). A
 * signal holds the path; links call navigate(); the browser's back and forward update it.
 */
export const BASE = '/app';
export const path = signal(location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/');

/** `within`: a move within the page shown (a library group chosen by its tab): focus stays where it is. */
export function navigate(to: string, replace = false, within = false): void {
  const url = `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  path.value = to;
  // A new page: focus its heading, so screen readers and keyboards start there.
  if (!within) queueMicrotask(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

addEventListener('popstate', () => {
  path.value = location.pathname.slice(BASE.length) || '/';
});

/** For a link's onClick: an ordinary click navigates in the app; a modified one opens as the browser does. */
export function follow(event: MouseEvent, to: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(to);
}
