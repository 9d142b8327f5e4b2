import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useActions } from '../actions.js';
import { api, type Family } from '../api.js';
import { formatDate } from '../format.js';
import { messages } from '../messages.js';
import { ErrorText, Status } from '../ui.js';

const t = messages.invitations;

type OpenInvitation = NonNullable<Awaited<ReturnType<typeof listOpen>>['data']>['invitations'][number];
const listOpen = () => api.GET('/user/invitations');

/**
 * The Family page's invitations: a button that makes a link (shown once, to copy: the server keeps
 * only its hash), and the family's open invitations, each with when it expires and a Revoke button.
 */
export function FamilyInvitations({ members }: { members: Family['members'] }) {
  const open = useSignal<OpenInvitation[] | undefined>(undefined);
  const link = useSignal<{ url: string; expiresAt: string } | undefined>(undefined);
  const reload = async () => {
    const { data } = await listOpen();
    if (data) open.value = data.invitations;
  };
  const { error, status, act } = useActions(reload);
  useEffect(() => {
    void reload();
  }, []);
  const nameOf = (userId: string): string => members.find((m) => m.userId === userId)?.verifiedEmail ?? userId;

  const invite = async () => {
    const answer = api.POST('/user/invitations');
    const { data } = await answer;
    // The link is on the page before the status says it was made.
    if (data) link.value = { url: data.invitation.url, expiresAt: data.invitation.expiresAt };
    await act(answer, t.made);
  };
  const copy = () => void navigator.clipboard.writeText(link.value!.url).then(() => (status.value = t.copied), () => (status.value = t.copyByHand));

  return (
    <>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <p>{t.intro}</p>
      <button type="button" onClick={() => void invite()}>
        {t.invite}
      </button>
      {link.value && (
        <div class="toolbar">
          <label for="invitation-link">{t.link(formatDate(link.value.expiresAt))}</label>
          <input id="invitation-link" readOnly value={link.value.url} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={copy}>
            {t.copy}
          </button>
        </div>
      )}
      <h3>{t.open}</h3>
      {open.value?.length === 0 && <p>{t.none}</p>}
      <ul class="invitations">
        {open.value?.map((i) => {
          const what = t.row(nameOf(i.invitedBy), formatDate(i.expiresAt));
          return (
            <li key={i.id}>
              {what}{' '}
              <button
                type="button"
                aria-label={t.revokeOne(what)}
                onClick={() => void act(api.DELETE('/user/invitations/{id}', { params: { path: { id: i.id } } }), t.revoked)}
              >
                {t.revoke}
              </button>
            </li>
          );
        })}
      </ul>
    </>
  );
}
