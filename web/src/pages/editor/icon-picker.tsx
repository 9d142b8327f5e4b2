import { useId } from 'preact/hooks';
import { messages } from '../../messages.js';
import { useEditor } from './state.js';

const t = messages.editor;

/** What every icon picker of the editor takes: a visual picker may replace this one behind the same props. */
export interface IconPickerProps {
  /** The picker's accessible name ("Icon for Intro"). */
  label: string;
  /** The icon chosen: a media reference (`yoto:#…`, `service:#…`), or none. */
  value: string | undefined;
  onChange(value: string | undefined): void;
  /** The track's or chapter's title, for a picker that suggests icons from it (this one does not). */
  suggestFor?: string;
}

/** A list of the public icons and one's own (by title), the chosen one shown beside it. */
export function IconPicker(props: IconPickerProps) {
  const { label, value } = props;
  const { icons } = useEditor();
  const id = useId();
  // `yoto:#x` and `service:#x` name the same icon.
  const current = icons.value.find((i) => i.ref === value || i.ref.slice(5) === value?.replace(/^(yoto|service):/, ''));
  return (
    <span class="icon-select">
      {current ? <img src={current.url} alt="" width={16} height={16} /> : null}
      <label for={id} class="visually-hidden">
        {label}
      </label>
      <select id={id} value={current?.ref ?? ''} onChange={(e) => props.onChange(e.currentTarget.value || undefined)}>
        <option value="">{t.noIcon}</option>
        {icons.value.map((icon) => (
          <option key={icon.ref} value={icon.ref}>
            {icon.title}
          </option>
        ))}
      </select>
    </span>
  );
}
