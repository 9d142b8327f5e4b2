import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { BASE, follow } from './router.js';
import { messages } from './messages.js';

/** A page: its title in the tab and as the one h1 (focusable, so navigation can move focus there). */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} - ${messages.appName}`;
  }, [title]);
  return (
    <main>
      <h1 tabIndex={-1}>{title}</h1>
      {children}
    </main>
  );
}

export function Link({ to, current, children, class: className }: { to: string; current?: boolean; children: ComponentChildren; class?: string }) {
  return (
    <a href={`${BASE}${to}`} class={className} aria-current={current ? 'page' : undefined} onClick={(e) => follow(e, to)}>
      {children}
    </a>
  );
}

/** A polite live region: what just happened, for everyone. */
export function Status({ children }: { children: ComponentChildren }) {
  return (
    <p role="status" class="status">
      {children}
    </p>
  );
}

export function ErrorText({ message }: { message: string | undefined }) {
  return message ? (
    <p role="alert" class="error">
      {messages.common.error(message)}
    </p>
  ) : null;
}
