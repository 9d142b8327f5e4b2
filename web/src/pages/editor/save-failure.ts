import { mayRetry } from '../../api.js';
import { messages } from '../../messages.js';
import { refusalOf } from '../../refusals.js';

const t = messages.cardEditor;

/** Why a save failed, as said beside Save: the field refused (a body path) when the server named one. */
export interface SaveFailure {
  message: string;
  field?: string;
  /** Trying again may succeed: no connection, or the server's trouble. */
  retry: boolean;
}

/** A field of the card by its path in the body, in words ("the title of chapter 2"), or undefined. */
function fieldName(path: string): string | undefined {
  const simple: Record<string, string> = {
    title: t.fields.title,
    'metadata/description': t.fields.description,
    'metadata/category': t.fields.category,
  };
  if (simple[path]) return simple[path];
  if (path.startsWith('metadata/languages')) return t.fields.languages;
  const [, chapter, track] = /^content\/chapters\/(\d+)(?:\/tracks\/(\d+))?\/title$/.exec(path) ?? [];
  if (chapter === undefined) return undefined;
  return track === undefined ? t.fields.chapterTitle(Number(chapter) + 1) : t.fields.trackTitle(Number(track) + 1, Number(chapter) + 1);
}

/**
 * A failed save in words a parent reads. A refusal naming a field the editor shows says which and
 * why ("the title can have at most 100 characters."); any other refusal, a plain sentence with the
 * server's message; no connection and the server's trouble, their message as it is (Retry follows).
 */
export function saveFailure(error: unknown, response: Response): SaveFailure {
  const refusal = refusalOf(error, response);
  const retry = mayRetry(response);
  if (retry) return { message: messages.editor.saveFailed(refusal.detail), retry };
  const name = refusal.field ? fieldName(refusal.field) : undefined;
  const why = name ? (refusal.problem ? t.refusedField(name, refusal.problem) : t.refusedAs(name, refusal.detail)) : t.refused(refusal.detail);
  return { message: messages.editor.saveFailed(why), field: name ? refusal.field : undefined, retry };
}
