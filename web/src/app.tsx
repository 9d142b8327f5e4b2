import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { hasOwnSignIn, signIn, signOut, tokens, useToken } from './auth.js';
import { MainNav } from './main-nav.js';
import { messages } from './messages.js';
import { CardsPage } from './pages/cards.js';
import { EditorPage } from './pages/editor/editor-page.js';
import { FamilyPage } from './pages/family/index.js';
import { LibraryPage } from './pages/library/library.js';
import { NowPlaying } from './now-playing.js';
import { PlayerPage } from './pages/player.js';
import { SharedWishlistPage, WishlistsPage } from './pages/wishlists/index.js';
import { Link, Page } from './ui.js';
import { path } from './router.js';
import { hasPlayerCredential } from './player-credential.js';

function route(current: string) {
  const [, first = '', id = '', sub = ''] = current.split('/');
  const cardId = decodeURIComponent(id);
  switch (first) {
    case '':
      return <CardsPage />;
    case 'cards':
      return <EditorPage key={cardId} cardId={cardId === 'new' ? undefined : cardId} />;
    case 'play':
      return <PlayerPage key={cardId} cardId={cardId} />;
    case 'library':
      return <LibraryPage groupId={cardId || undefined} />;
    case 'wishlists':
      return <WishlistsPage />;
    case 'shared':
      return <SharedWishlistPage key={cardId} shareId={cardId} />;
    case 'family':
      if (id === 'players' && sub) return <PlayerSettings key={sub} deviceId={decodeURIComponent(sub)} />;
      return <FamilyPage />;
    case 'be-player':
      return <BePlayer />;
    case 'links':
      return <Links />;
    default:
      return (
        <Page title={messages.notFound}>
          <p>
            <Link to="/">{messages.nav.cards}</Link>
          </p>
        </Page>
      );
  }
}

/** The player page, loaded when first shown: most visits never need it (first-load budget, README). */
function BePlayer() {
  const page = useSignal<typeof import('./pages/player-device.js').BePlayerPage | undefined>(undefined);
  useEffect(() => void import('./pages/player-device.js').then((m) => (page.value = m.BePlayerPage)), []);
  const Loaded = page.value;
  return Loaded ? <Loaded /> : <Page title={messages.common.loading}>{null}</Page>;
}

/** Linked services, loaded when first shown, as the player page. */
function Links() {
  const page = useSignal<typeof import('./pages/links.js').LinksPage | undefined>(undefined);
  useEffect(() => void import('./pages/links.js').then((m) => (page.value = m.LinksPage)), []);
  const Loaded = page.value;
  return Loaded ? <Loaded /> : <Page title={messages.common.loading}>{null}</Page>;
}

/** A player's page (/family/players/<deviceId>), loaded when first shown, as the player page. */
function PlayerSettings({ deviceId }: { deviceId: string }) {
  const page = useSignal<typeof import('./pages/family/player.js').PlayerSettingsPage | undefined>(undefined);
  useEffect(() => void import('./pages/family/player.js').then((m) => (page.value = m.PlayerSettingsPage)), []);
  const Loaded = page.value;
  return Loaded ? <Loaded deviceId={deviceId} /> : <Page title={messages.common.loading}>{null}</Page>;
}

export function App() {
  // A browser made a player runs as the player with its own credential, signed in or not, in
  // player mode: no header; the menu is behind a held control (pages/player-mode/).
  if (path.value === '/be-player' && hasPlayerCredential()) return <BePlayer />;
  if (!tokens.value) return <SignIn />;
  const current = path.value;
  return (
    <>
      <header class="top">
        <span class="brand">{messages.appName}</span>
        <MainNav current={current} />
        <button type="button" class="quiet" onClick={() => void signOut()}>
          {messages.nav.signOut}
        </button>
      </header>
      {route(current)}
      <NowPlaying />
    </>
  );
}

function SignIn() {
  const own = useSignal<boolean | undefined>(undefined);
  const pasted = useSignal('');
  const error = sessionStorage.getItem('cardshelf:sign-in-error');
  useEffect(() => {
    sessionStorage.removeItem('cardshelf:sign-in-error');
    hasOwnSignIn().then((yes) => (own.value = yes), () => (own.value = true));
  }, []);
  return (
    <Page title={messages.welcome.title}>
      {error && <p role="alert" class="error">{error}</p>}
      {own.value === false ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            useToken(pasted.value);
          }}
        >
          <p>{messages.signIn.externalIntro}</p>
          <label for="token">{messages.signIn.tokenLabel}</label>
          <input id="token" type="password" autocomplete="off" value={pasted.value} onInput={(e) => (pasted.value = e.currentTarget.value)} required />
          <button type="submit">{messages.signIn.useToken}</button>
        </form>
      ) : (
        <>
          {/* A shared wishlist's link, opened signed out: say what was sent; signing in returns here. */}
          <p>{path.value.startsWith('/shared/') ? messages.wishlistPicker.signedOut : messages.signIn.intro}</p>
          <button type="button" class="primary" onClick={() => void signIn(path.value)}>
            {messages.signIn.button}
          </button>
        </>
      )}
    </Page>
  );
}
