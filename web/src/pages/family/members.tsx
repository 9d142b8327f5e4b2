import { useActions } from '../../actions.js';
import { api } from '../../api.js';
import { formatDate } from '../../format.js';
import { messages } from '../../messages.js';
import { ErrorText, Status } from '../../ui.js';
import { ConfirmButton } from '../../confirm-button.js';
import { nameOf, type NamedMember } from './names.js';

const t = messages.members;

/**
 * The family's members by name, each approved or waiting; an approved member (the server's rule:
 * docs/api.md, "Family") approves those waiting and removes others, after a confirmation.
 */
export function FamilyMembers({ members, reload }: { members: readonly NamedMember[]; reload: () => Promise<void> }) {
  const { error, status, act } = useActions(reload);
  const me = members.find((m) => m.self);
  const mayManage = Boolean(me?.approved);
  if (members.length === 0) return <p>{t.justYou}</p>;
  const path = (m: NamedMember) => ({ params: { path: { userId: m.userId } } });
  return (
    <>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <ul class="members">
        {members.map((m) => {
          const name = nameOf(m);
          const state = m.approved ? t.approved : m.self ? t.waitingForOthers : t.waiting;
          return (
            <li key={m.userId}>
              <p>
                <strong>{m.self ? t.you(name) : name}</strong>: {state}, {t.since(formatDate(m.addedAt))}
              </p>
              {mayManage && !m.self && (
                <div class="toolbar">
                  {!m.approved && (
                    <button type="button" class="primary" onClick={() => void act(api.PATCH('/user/family/members/{userId}', { ...path(m), body: { approved: true } }), t.approvedDone(name))}>
                      {t.approve(name)}
                    </button>
                  )}
                  <ConfirmButton
                    label={t.remove(name)}
                    question={t.confirmRemove(name)}
                    yes={t.yesRemove}
                    onConfirm={() => act(api.DELETE('/user/family/members/{userId}', path(m)), t.removed(name))}
                  />
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}
