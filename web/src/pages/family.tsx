import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, errorMessage, type Family } from '../api.js';
import { formatDate } from '../format.js';
import { messages } from '../messages.js';
import { ErrorText, Link, Page } from '../ui.js';
import { FamilyInvitations } from './family-invitations.js';
import { FamilyPlayers } from './family-players.js';

const t = messages.family;

export function FamilyPage() {
  const family = useSignal<Family | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  useEffect(() => {
    void api.GET('/user/family', { params: { query: { allowStub: 'true' } } }).then(({ data, error: e, response }) => {
      if (data) family.value = data.family ?? undefined;
      else error.value = errorMessage(e, response);
    });
  }, []);
  const f = family.value;
  return (
    <Page title={t.title}>
      <ErrorText message={error.value} />
      {!f ? (
        <p>{messages.common.loading}</p>
      ) : (
        <>
          <h2>{t.members}</h2>
          <ul>
            {f.members.map((m) => (
              <li key={m.userId}>
                {m.verifiedEmail ?? m.userId} ({m.approved ? t.approved : t.pending}, {t.since(formatDate(m.addedAt))})
              </li>
            ))}
          </ul>
          <h2>{messages.invitations.title}</h2>
          <FamilyInvitations members={f.members} />
          <h2>{t.players}</h2>
          <FamilyPlayers />
          <p>
            <Link to="/be-player">{messages.players.bePlayer}</Link>
          </p>
        </>
      )}
    </Page>
  );
}
