import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, errorMessage } from '../../api.js';
import { useLiveEvents } from '../../events.js';
import { messages } from '../../messages.js';
import { ErrorText, Link, Page } from '../../ui.js';
import './family.css';
import { FamilyInvitations } from './invitations.js';
import { FamilyMembers } from './members.js';
import type { NamedMember } from './names.js';
import { FamilyPlayers } from './players.js';

const t = messages.family;

/** The family: its members by name (approved, removed), its invitations, its players. */
export function FamilyPage() {
  const members = useSignal<NamedMember[] | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  const load = async (): Promise<void> => {
    const { data, error: e, response } = await api.GET('/user/family/members');
    if (data) members.value = data.members;
    else error.value = errorMessage(e, response);
  };
  useEffect(() => void load(), []);
  // Someone joined, was approved or removed, elsewhere.
  useLiveEvents(['family.changed'], load);
  return (
    <Page title={t.title}>
      <div class="family">
        <ErrorText message={error.value} />
        {!members.value ? (
          <p>{messages.common.loading}</p>
        ) : (
          <>
            <h2>{t.members}</h2>
            <FamilyMembers members={members.value} reload={load} />
            <h2>{messages.invitations.title}</h2>
            <FamilyInvitations members={members.value} />
            <h2>{t.players}</h2>
            <FamilyPlayers />
            <p>
              <Link to="/be-player">{messages.players.bePlayer}</Link>
            </p>
          </>
        )}
      </div>
    </Page>
  );
}
