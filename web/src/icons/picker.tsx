import { useSignal } from '@preact/signals';
import type { JSX } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef } from 'preact/hooks';
import { messages } from '../messages.js';
import type { IconPickerProps } from './icon-picker.js';
import { ensureIcons, hashOf, ownIcons, publicIcons, refreshOwnIcons, type PickerIcon } from './icon-list.js';
import { matchesSearch, suggestIcons } from './icon-match.js';
import './icon-picker.css';

const t = messages.icons;

/** An option of the list: its element id and the icon it picks (none: "No icon"). */
interface Choice {
  id: string;
  icon: PickerIcon | undefined;
}

interface Section {
  key: string;
  label: string;
  icons: PickerIcon[];
}

/**
 * The WAI-ARIA combobox with a listbox popup (APG "editable combobox with list autocomplete"),
 * the listbox laid out as a grid of icons: focus stays in the search box; Up and Down move a row,
 * Left and Right an icon once one is chosen; Enter picks, Escape closes; focus returns to the
 * button either way.
 */
export function Picker(props: IconPickerProps): JSX.Element {
  const { label, value, suggestFor } = props;
  const open = useSignal(false);
  const search = useSignal('');
  const active = useSignal<string | undefined>(undefined);
  const trigger = useRef<HTMLButtonElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const id = useId();

  useEffect(() => void ensureIcons(), []);
  // Focused as the panel is drawn, before any further key arrives: what is typed at once is kept.
  useLayoutEffect(() => {
    if (!open.value) return;
    input.current?.focus();
    void ensureIcons();
    void refreshOwnIcons();
  }, [open.value]);

  const own = ownIcons.value ?? [];
  const all = [...own, ...(publicIcons.value ?? [])];
  const current = value === undefined ? undefined : all.find((i) => hashOf(i.ref) === hashOf(value));
  const currentTitle = value === undefined ? t.noIcon : (current?.title ?? t.unknown);

  const query = search.value.trim();
  const sections: Section[] = (
    query
      ? [
          { key: 'own', label: t.own, icons: own.filter((i) => matchesSearch(i, query)) },
          { key: 'public', label: t.public, icons: (publicIcons.value ?? []).filter((i) => matchesSearch(i, query)) },
        ]
      : [
          { key: 'suggested', label: t.suggested(suggestFor ?? ''), icons: suggestIcons(suggestFor, all) },
          { key: 'own', label: t.own, icons: own },
          { key: 'public', label: t.public, icons: publicIcons.value ?? [] },
        ]
  ).filter((s) => s.icons.length > 0);
  const none: Choice[] = query ? [] : [{ id: `${id}-none`, icon: undefined }];
  const groups = sections.map((s) => ({ ...s, choices: s.icons.map((icon, n): Choice => ({ id: `${id}-${s.key}-${n}`, icon })) }));
  const choices = [...none, ...groups.flatMap((g) => g.choices)];
  const activeChoice = choices.find((c) => c.id === active.value);
  const found = sections.reduce((n, s) => n + (s.key === 'suggested' ? 0 : s.icons.length), 0);

  const close = (returnFocus: boolean): void => {
    open.value = false;
    search.value = '';
    active.value = undefined;
    if (returnFocus) trigger.current?.focus();
  };
  const pick = (choice: Choice): void => {
    props.onChange(choice.icon?.ref);
    close(true);
  };
  const activate = (element: HTMLElement | undefined): void => {
    if (!element) return;
    active.value = element.id;
    element.scrollIntoView({ block: 'nearest' });
  };

  /** The option a row below (or above) the active one, nearest to it across; the first (or last) when none is active. */
  const moveRow = (down: boolean): void => {
    const options = [...(list.current?.querySelectorAll<HTMLElement>('[role=option]') ?? [])];
    const from = options.find((o) => o.id === active.value);
    if (!from) return activate(down ? options[0] : options.at(-1));
    const at = from.getBoundingClientRect();
    const across = at.left + at.width / 2;
    const beyond = options.filter((o) => (down ? o.getBoundingClientRect().top >= at.bottom - 1 : o.getBoundingClientRect().bottom <= at.top + 1));
    if (beyond.length === 0) return;
    const tops = beyond.map((o) => o.getBoundingClientRect().top);
    const rowTop = down ? Math.min(...tops) : Math.max(...tops);
    const row = beyond.filter((o) => Math.abs(o.getBoundingClientRect().top - rowTop) < 2);
    const distance = (o: HTMLElement): number => Math.abs(o.getBoundingClientRect().left + o.getBoundingClientRect().width / 2 - across);
    activate(row.reduce((best, o) => (distance(o) < distance(best) ? o : best)));
  };
  const moveBy = (step: number): void => {
    const options = [...(list.current?.querySelectorAll<HTMLElement>('[role=option]') ?? [])];
    const at = options.findIndex((o) => o.id === active.value);
    activate(options[Math.min(options.length - 1, Math.max(0, at + step))]);
  };

  const onKeyDown = (e: KeyboardEvent): void => {
    const keys: Record<string, (() => void) | undefined> = {
      ArrowDown: () => moveRow(true),
      ArrowUp: () => moveRow(false),
      // Left and Right move the caret in the search until an icon is chosen.
      ArrowRight: activeChoice ? () => moveBy(1) : undefined,
      ArrowLeft: activeChoice ? () => moveBy(-1) : undefined,
      Enter: activeChoice ? () => pick(activeChoice) : () => undefined,
      Escape: () => close(true),
    };
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  };
  // Closed when focus leaves the picker (a click or Tab elsewhere), without taking focus back.
  const onFocusOut = (e: FocusEvent): void => {
    if (open.value && !(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) close(false);
  };

  const option = (choice: Choice): JSX.Element => {
    const icon = choice.icon;
    const selected = icon ? icon.ref === current?.ref : value === undefined;
    return (
      // The pattern's options are not focused: focus stays in the search box, which names the
      // active one (aria-activedescendant) and takes the keys for it; a click picks.
      // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/interactive-supports-focus
      <div
        key={choice.id}
        id={choice.id}
        role="option"
        aria-selected={selected}
        class={`icon-picker-option${choice.id === active.value ? ' active' : ''}${icon ? '' : ' none'}`}
        title={icon?.title}
        onMouseDown={(e) => e.preventDefault()}
        onClick={() => pick(choice)}
      >
        {icon ? <img src={icon.url} alt={icon.title} width={16} height={16} loading="lazy" /> : t.noIcon}
      </div>
    );
  };

  const listId = `${id}-list`;
  const hintId = `${id}-hint`;
  return (
    <div class={`icon-picker${open.value ? ' open' : ''}`} onFocusOut={onFocusOut}>
      <button type="button" ref={trigger} class="icon-picker-trigger" aria-haspopup="dialog" aria-expanded={open.value} onClick={() => (open.value ? close(true) : (open.value = true))}>
        {current ? <img src={current.url} alt="" width={16} height={16} /> : <span class="icon-picker-blank" />}
        <span class="visually-hidden">{label}: </span>
        <span class="icon-picker-title">{currentTitle}</span>
      </button>
      {open.value ? (
        <div class="icon-picker-panel" role="dialog" aria-label={label}>
          <label for={`${id}-search`}>{t.search}</label>
          <input
            id={`${id}-search`}
            ref={input}
            type="text"
            role="combobox"
            autocomplete="off"
            aria-autocomplete="list"
            aria-expanded="true"
            aria-controls={listId}
            aria-activedescendant={activeChoice?.id}
            aria-describedby={hintId}
            value={search.value}
            onInput={(e) => {
              search.value = e.currentTarget.value;
              active.value = undefined;
            }}
            onKeyDown={onKeyDown}
          />
          <p id={hintId} class="icon-picker-hint">
            {t.searchHint}
          </p>
          <p class="icon-picker-status" role="status">
            {publicIcons.value === undefined ? t.loading : query ? (found ? t.found(found) : t.none(query)) : (activeChoice?.icon?.title ?? '')}
          </p>
          <div id={listId} ref={list} role="listbox" aria-label={label} class="icon-picker-list">
            {none.map(option)}
            {groups.map((s) => (
              <div key={s.key} role="group" aria-labelledby={`${id}-${s.key}`} class="icon-picker-group">
                <div role="presentation" id={`${id}-${s.key}`} class="icon-picker-heading">
                  {s.label}
                </div>
                <div role="presentation" class="icon-picker-grid">
                  {s.choices.map(option)}
                </div>
              </div>
            ))}
          </div>
        </div>
      ) : null}
    </div>
  );
}
