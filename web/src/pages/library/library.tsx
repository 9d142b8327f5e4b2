import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { useActions } from '../../actions.js';
import { api, coverOf, errorMessage, type CardSummary, type Group } from '../../api.js';
import { ConfirmDialog } from '../../confirm-dialog.js';
import { Cover } from '../../design/cover.js';
import { useLiveEvents } from '../../events.js';
import { messages } from '../../messages.js';
import { PlayOnMenu } from '../../play-on-menu.js';
import { usePlayers } from '../../player-controls.js';
import { navigate } from '../../router.js';
import { ErrorText, Link, Page, Status } from '../../ui.js';
import { GroupTabs } from './group-tabs.js';

const t = messages.library;
const g = messages.libraryGroups;
/** A group's image id when the app makes one: the public service's default group image. */
const DEFAULT_IMAGE = 'fp-cards';
/** The tab of every card: /app/library. */
const ALL = 'all';

interface Entry {
  cardId: string;
  card: CardSummary;
}

/** The address of a tab: the group's id after /library, none for all cards. */
const addressOf = (tab: string): string => (tab === ALL ? '/library' : `/library/${encodeURIComponent(tab)}`);

/**
 * The family library with its groups as tabs (the chosen one in the address: /app/library/<groupId>,
 * so reload, back and forward keep it); groups made, renamed, deleted (after asking) and filled here.
 */
export function LibraryPage({ groupId }: { groupId: string | undefined }) {
  const cards = useSignal<Entry[] | undefined>(undefined);
  const groups = useSignal<Group[]>([]);
  const { error, status, act } = useActions(() => load());
  const newName = useSignal('');
  const rename = useSignal('');
  const addId = useSignal('');
  const deleting = useSignal(false);
  const players = usePlayers();
  const tab = groupId ?? ALL;

  const loads = useRef(0);
  /** The cards and the groups, read together and shown together; a read overtaken by a later one is dropped. */
  const load = async () => {
    const mine = ++loads.current;
    const [library, listed] = await Promise.all([api.GET('/card/family/library', { params: { query: { view: 'groups' } } }), api.GET('/card/family/library/groups')]);
    if (mine !== loads.current) return;
    if (!library.data) return void (error.value = errorMessage(library.error, library.response));
    cards.value = library.data.cards;
    groups.value = listed.data ?? [];
  };
  useEffect(() => void load(), []);
  // Other members' changes: cards added, groups, and their cards' titles and covers.
  useLiveEvents(['library.', 'group.', 'card.'], load);

  const group = groups.value.find((x) => x.id === tab);
  // The rename field starts with the chosen group's name (a group chosen by tab, address or history).
  useEffect(() => {
    if (group) rename.value = group.name;
  }, [group?.id]);

  const setItems = (x: Group, items: string[]) =>
    act(api.PUT('/card/family/library/groups/{groupId}', { params: { path: { groupId: x.id } }, body: { items: items.map((contentId) => ({ contentId })) } }), messages.common.saved);

  // Until the library is read, only that it is loading: forms shown before it would move down
  // under the pointer as the cards arrive above them.
  if (!cards.value) {
    return (
      <Page title={t.title}>
        <ErrorText message={error.value} />
        <Status>{error.value ? '' : messages.common.loading}</Status>
      </Page>
    );
  }
  const unknown = tab !== ALL && !group;
  const shown = group ? cards.value.filter((c) => group.items.some((i) => i.contentId === c.cardId)) : unknown ? [] : cards.value;
  const emptyText = unknown ? g.unknown : !group ? g.emptyLibrary : cards.value.length === 0 ? g.emptyGroupNoCards(group.name) : g.emptyGroup(group.name);
  return (
    <Page title={t.title}>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <GroupTabs label={t.groups} tabs={[{ id: ALL, name: t.all }, ...groups.value]} selected={unknown ? undefined : tab} onSelect={(id) => navigate(addressOf(id), false, true)}>
        {shown.length === 0 && (
          <p class="library-empty">
            {emptyText}
            {unknown && (
              <>
                {' '}
                <Link to="/library">{t.all}</Link>
              </>
            )}
          </p>
        )}
        <ul class="cards">
          {shown.map(({ cardId, card }) => (
            <li key={cardId} class="card">
              <Cover cardId={cardId} title={card.title} src={coverOf(card)} />
              <div class="card-body">
                <h2>{card.title}</h2>
                <PlayOnMenu cardId={cardId} title={card.title} players={players} titleOf={(id) => cards.value?.find((c) => c.cardId === id)?.card.title} />
              </div>
            </li>
          ))}
        </ul>
        {group && (
          <>
            <form
              class="toolbar"
              onSubmit={(e) => {
                e.preventDefault();
                void act(api.PUT('/card/family/library/groups/{groupId}', { params: { path: { groupId: group.id } }, body: { name: rename.value } }), messages.common.saved);
              }}
            >
              <label for="rename">{t.renameTo}</label>
              <input id="rename" value={rename.value} onInput={(e) => (rename.value = e.currentTarget.value)} required />
              <button type="submit">{messages.common.rename}</button>
              <button type="button" aria-label={g.deleteGroup(group.name)} onClick={() => (deleting.value = true)}>
                {messages.common.delete}
              </button>
            </form>
            {cards.value.length > 0 && (
              <fieldset>
                <legend>{group.name}</legend>
                {cards.value.map(({ cardId, card }) => {
                  const inGroup = group.items.some((i) => i.contentId === cardId);
                  const ids = group.items.map((i) => i.contentId);
                  return (
                    <div key={cardId}>
                      <input
                        id={`in-${cardId}`}
                        type="checkbox"
                        checked={inGroup}
                        onChange={() => void setItems(group, inGroup ? ids.filter((id) => id !== cardId) : [...ids, cardId])}
                      />
                      <label for={`in-${cardId}`}>{t.inGroup(card.title)}</label>
                    </div>
                  );
                })}
              </fieldset>
            )}
            <ConfirmDialog
              open={deleting.value}
              title={g.confirmTitle(group.name)}
              text={g.confirmText}
              confirm={g.confirm}
              cancel={g.cancel}
              onCancel={() => (deleting.value = false)}
              onConfirm={() => {
                deleting.value = false;
                const { id, name } = group;
                void act(api.DELETE('/card/family/library/groups/{groupId}', { params: { path: { groupId: id } } }), g.deleted(name)).then((done) => {
                  // Gone: back to all cards, in place of the group's address (it leads nowhere now).
                  if (done) navigate(addressOf(ALL), true, true);
                });
              }}
            />
          </>
        )}
      </GroupTabs>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void act(api.POST('/card/family/library/groups', { body: { name: newName.value, imageId: DEFAULT_IMAGE, items: [] } }), messages.common.saved).then((done) => {
            if (done) newName.value = '';
          });
        }}
      >
        <label for="new-group">{t.newGroup}</label>
        <input id="new-group" value={newName.value} onInput={(e) => (newName.value = e.currentTarget.value)} required />
        <button type="submit">{t.create}</button>
      </form>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void act(api.POST('/card/family/library', { body: { cardId: addId.value.trim() } }), t.added);
        }}
      >
        <label for="add-card">{t.addCard}</label>
        <input id="add-card" value={addId.value} onInput={(e) => (addId.value = e.currentTarget.value)} required />
        <button type="submit">{t.add}</button>
      </form>
    </Page>
  );
}
