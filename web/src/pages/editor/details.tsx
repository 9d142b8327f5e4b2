import { useSignal } from '@preact/signals';
import { authorizedRequest } from '../../api.js';
import { messages } from '../../messages.js';
import { LIMITS } from '../../limits.js';
import { ErrorText, Status } from '../../ui.js';
import { SAVE_FAILURE_ID, useEditor } from './state.js';

const t = messages.editor;
const CATEGORIES = ['', 'stories', 'music', 'radio', 'podcast', 'sfx', 'activities', 'alarms'] as const;

/** The card's details: title, description, category, languages and cover. */
export function Details() {
  const { title, description, category, languages, cover, refused } = useEditor();
  const status = useSignal('');
  const error = useSignal<string | undefined>(undefined);

  const uploadCover = async (file: File): Promise<void> => {
    error.value = undefined;
    status.value = t.coverUploading;
    const answer = await authorizedRequest('/media/coverImage/user/me/upload?coverType=myo', { method: 'POST', body: file, headers: { 'content-type': file.type || 'application/octet-stream' } });
    const body = (await answer.json()) as { coverImage?: { mediaUrl: string }; error?: { message: string } };
    status.value = '';
    if (body.coverImage) cover.value = body.coverImage.mediaUrl;
    else error.value = body.error?.message ?? `HTTP ${answer.status}`;
  };

  return (
    <fieldset>
      <legend>{t.fields}</legend>
      <label for="title">{t.cardTitle}</label>
      <input
        id="title"
        value={title.value}
        onInput={(e) => (title.value = e.currentTarget.value)}
        required
        maxLength={LIMITS.cardTitle}
        aria-invalid={refused.value === 'title' || undefined}
        aria-describedby={refused.value === 'title' ? `title-count ${SAVE_FAILURE_ID}` : 'title-count'}
      />
      <p id="title-count" class="field-count">
        {messages.cardEditor.count(title.value.length, LIMITS.cardTitle)}
      </p>
      {/* Said once, as the title reaches its limit (the counter itself is read with the field). */}
      <Status>{title.value.length >= LIMITS.cardTitle ? messages.cardEditor.atLimit(LIMITS.cardTitle) : ''}</Status>
      <label for="description">{t.description}</label>
      <textarea id="description" value={description.value} onInput={(e) => (description.value = e.currentTarget.value)} />
      <label for="category">{t.category}</label>
      <select id="category" value={category.value} onChange={(e) => (category.value = e.currentTarget.value)}>
        {CATEGORIES.map((c) => (
          <option key={c} value={c}>
            {messages.words.categories[c] ?? c}
          </option>
        ))}
      </select>
      <label for="languages">{t.languages}</label>
      <input id="languages" value={languages.value} onInput={(e) => (languages.value = e.currentTarget.value)} />
      <label for="cover">{t.cover}</label>
      <input id="cover" type="file" accept="image/*" onChange={(e) => e.currentTarget.files?.[0] && void uploadCover(e.currentTarget.files[0])} />
      <Status>{status.value}</Status>
      <ErrorText message={error.value} />
      {cover.value ? <img class="cover" src={cover.value} alt={t.cover} width={130} height={100} /> : <p>{t.noCover}</p>}
    </fieldset>
  );
}
