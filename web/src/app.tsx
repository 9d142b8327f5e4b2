import { useSignal } from '@preact/signals';
import type { ComponentType } from 'preact';
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

/**
 * A page whose code is loaded when first shown: most visits never need it (first-load budget,
 * README). Shows "Loading…" until its module is in.
 */
function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  return function Lazy(props: P) {
    const page = useSignal<ComponentType<P> | undefined>(undefined);
    useEffect(() => void load().then((loaded) => (page.value = loaded)), []);
    const Loaded = page.value;
    return Loaded ? <Loaded {...props} /> : <Page title={messages.common.loading}>{null}</Page>;
  };
}

const BePlayer = lazyPage(() => import('./pages/player-device.js').then((m) => m.BePlayerPage));
const Links = lazyPage(() => import('./pages/links.js').then((m) => m.LinksPage));
/** A player's page (/family/players/<deviceId>). */
const PlayerSettings = lazyPage(() => import('./pages/family/player.js').then((m) => m.PlayerSettingsPage));

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
