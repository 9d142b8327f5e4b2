import { useSignal, type Signal } from '@preact/signals';
import { errorMessage } from './api.js';

/** What an API call of the typed client answers, as far as an action needs it. */
type Answer = Promise<{ error?: unknown; response: Response }>;

export interface Actions {
  /** The last refusal, in the server's words (shown by ErrorText). */
  error: Signal<string | undefined>;
  /** The last outcome, for the page's polite live region (Status). */
  status: Signal<string>;
  /** Runs a write: true once it is done and the page shows it, false when it was refused. */
  act: (work: Answer, done: string) => Promise<boolean>;
}

/**
 * A page's writes. Each clears the last outcome as it starts, and on success reloads the page's
 * data before it says `done`: so what the status announces is already on the page (nothing moves
 * under the pointer after "Saved."), and a second save is announced again. A refusal shows the
 * server's message as it is, and the page keeps what the person typed.
 */
export function useActions(reload: () => Promise<unknown>): Actions {
  const error = useSignal<string | undefined>(undefined);
  const status = useSignal('');
  const act = async (work: Answer, done: string): Promise<boolean> => {
    status.value = '';
    const { error: refused, response } = await work;
    if (refused) {
      error.value = errorMessage(refused, response);
      return false;
    }
    error.value = undefined;
    await reload();
    status.value = done;
    return true;
  };
  return { error, status, act };
}
