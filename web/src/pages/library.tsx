import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { useActions } from '../actions.js';
import { api, coverOf, errorMessage, type CardSummary, type Group } from '../api.js';
import { Cover } from '../design/cover.js';
import { useLiveEvents } from '../events.js';
import { messages } from '../messages.js';
import { PlayOn, usePlayers } from '../player-controls.js';
import { ErrorText, Page, Status } from '../ui.js';

const t = messages.library;
/** A group's image id when the app makes one: the public service's default group image. */
const DEFAULT_IMAGE = 'fp-cards';

interface Entry {
  cardId: string;
  card: CardSummary;
}

/** The family library with group tabs; groups made, renamed, deleted and filled here (checkboxes: keyboard too). */
export function LibraryPage() {
  const cards = useSignal<Entry[] | undefined>(undefined);
  const groups = useSignal<Group[]>([]);
  const tab = useSignal<string>('all');
  const { error, status, act } = useActions(() => load());
  const newName = useSignal('');
  const rename = useSignal('');
  const addId = useSignal('');
  const players = usePlayers();

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

  const setItems = (g: Group, items: string[]) =>
    act(api.PUT('/card/family/library/groups/{groupId}', { params: { path: { groupId: g.id } }, body: { items: items.map((contentId) => ({ contentId })) } }), messages.common.saved);

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
  const group = groups.value.find((g) => g.id === tab.value);
  const shown = group ? cards.value.filter((c) => group.items.some((i) => i.contentId === c.cardId)) : cards.value;
  return (
    <Page title={t.title}>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <div role="tablist" aria-label={t.groups} class="tabs">
        {[{ id: 'all', name: t.all }, ...groups.value].map((g) => (
          <button
            key={g.id}
            type="button"
            role="tab"
            id={`tab-${g.id}`}
            aria-selected={tab.value === g.id}
            aria-controls="tab-panel"
            onClick={() => {
              tab.value = g.id;
              rename.value = g.name;
            }}
          >
            {g.name}
          </button>
        ))}
      </div>
      <section id="tab-panel" role="tabpanel" aria-labelledby={`tab-${tab.value}`}>
        {shown.length === 0 && <p>{t.empty}</p>}
        <ul class="cards">
          {shown.map(({ cardId, card }) => (
            <li key={cardId} class="card">
              <Cover cardId={cardId} title={card.title} src={coverOf(card)} />
              <div class="card-body">
                <h2>{card.title}</h2>
                <PlayOn cardId={cardId} title={card.title} players={players} />
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
              <button
                type="button"
                onClick={() => {
                  tab.value = 'all';
                  void act(api.DELETE('/card/family/library/groups/{groupId}', { params: { path: { groupId: group.id } } }), messages.common.saved);
                }}
              >
                {messages.common.delete}
              </button>
            </form>
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
          </>
        )}
      </section>
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
