import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';

export interface Tab {
  id: string;
  name: string;
}

/** The id of a tab's element, and of the panel they control. */
export const tabElementId = (id: string): string => `tab-${id}`;
export const PANEL_ID = 'library-panel';

/** Which tab a key moves to from `index` of `count` (WAI-ARIA tabs: arrows wrap; Home, End); undefined for other keys. */
export function tabMove(key: string, index: number, count: number): number | undefined {
  switch (key) {
    case 'ArrowRight':
      return (index + 1) % count;
    case 'ArrowLeft':
      return (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return undefined;
  }
}

/**
 * The WAI-ARIA tabs pattern, activated as focus moves: one tab in the Tab order (the selected
 * one, or the first when none is: an unknown group in the address), arrows, Home and End move
 * the focus and choose; the panel is labelled by the chosen tab.
 */
export function GroupTabs(props: { label: string; tabs: readonly Tab[]; selected: string | undefined; onSelect: (id: string) => void; children: ComponentChildren }) {
  const { label, tabs, selected, onSelect, children } = props;
  const list = useRef<HTMLDivElement>(null);
  const current = tabs.findIndex((t) => t.id === selected);
  const focusable = current === -1 ? 0 : current;
  const onKeyDown = (event: KeyboardEvent) => {
    const from = tabs.findIndex((t) => tabElementId(t.id) === (event.target as HTMLElement).id);
    const to = from === -1 ? undefined : tabMove(event.key, from, tabs.length);
    if (to === undefined) return;
    event.preventDefault();
    const tab = tabs[to]!;
    list.current?.querySelector<HTMLElement>(`#${CSS.escape(tabElementId(tab.id))}`)?.focus();
    onSelect(tab.id);
  };
  return (
    <>
      <div role="tablist" aria-label={label} class="tabs" ref={list}>
        {tabs.map((t, i) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={tabElementId(t.id)}
            aria-selected={t.id === selected}
            aria-controls={PANEL_ID}
            tabIndex={i === focusable ? 0 : -1}
            onClick={() => onSelect(t.id)}
            onKeyDown={onKeyDown}
          >
            {t.name}
          </button>
        ))}
      </div>
      <section id={PANEL_ID} role="tabpanel" aria-labelledby={current === -1 ? undefined : tabElementId(selected!)} aria-label={current === -1 ? label : undefined}>
        {children}
      </section>
    </>
  );
}
