import { useSignal } from '@preact/signals';
import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';

export interface IconPickerProps {
  label: string;
  value: string | undefined;
  onChange(value: string | undefined): void;
  /** The track's or chapter's title: icons whose titles or tags share its words are offered first. */
  suggestFor?: string;
}

/**
 * A chapter's or track's icon: a button showing it, opening a searchable grid of one's own and
 * the public icons. The picker and its icon lists are loaded when a picker is first shown, so
 * that they stay out of the app's first load (README's budget).
 */
export function IconPicker(props: IconPickerProps): JSX.Element {
  const loaded = useSignal<typeof import('./picker.js').Picker | undefined>(undefined);
  useEffect(() => void import('./picker.js').then((m) => (loaded.value = m.Picker)), []);
  const Picker = loaded.value;
  return Picker ? <Picker {...props} /> : <span class="icon-picker-pending">{props.label}</span>;
}
