import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useActions } from '../../actions.js';
import { api } from '../../api.js';
import { formatDate } from '../../format.js';
import { messages } from '../../messages.js';
import { ErrorText, Status } from '../../ui.js';
import { nameOf, type NamedMember } from './names.js';

const t = messages.invitations;
const m = messages.members;

type OpenInvitation = NonNullable<Awaited<ReturnType<typeof listOpen>>['data']>['invitations'][number];
const listOpen = () => api.GET('/user/invitations');

/**
 * The Family page's invitations: a button that makes a link (shown once, to copy: the server keeps
 * only its hash), and the family's open invitations, each with when it expires and a Revoke button.
 */
export function FamilyInvitations({ members }: { members: readonly NamedMember[] }) {
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
  /** Who made it, by name: a stub family's only user (listed nowhere yet) is the caller; a former member is not named. */
  const row = (i: OpenInvitation): string => {
    const by = members.find((m) => m.userId === i.invitedBy);
    const made = formatDate(i.createdAt);
    const expires = formatDate(i.expiresAt);
    if (members.length === 0) return m.madeBy(m.youAlone, made, expires);
    return by ? m.madeBy(by.self ? m.you(nameOf(by)) : nameOf(by), made, expires) : m.madeOn(made, expires);
  };

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
        <div class="invitation-link">
          <label for="invitation-link">{t.link(formatDate(link.value.expiresAt))}</label>
          <p id="invitation-send" class="muted">{m.send}</p>
          <div class="toolbar">
            <input id="invitation-link" readOnly value={link.value.url} aria-describedby="invitation-send" onFocus={(e) => e.currentTarget.select()} />
            <button type="button" onClick={copy}>
              {t.copy}
            </button>
          </div>
        </div>
      )}
      <h3>{t.open}</h3>
      {open.value?.length === 0 && <p>{t.none}</p>}
      <ul class="invitations">
        {open.value?.map((i) => {
          const what = row(i);
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
