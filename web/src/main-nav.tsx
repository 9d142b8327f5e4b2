import { messages } from './messages.js';
import { Link } from './ui.js';

const NAV = [
  ['/', messages.nav.cards],
  ['/library', messages.nav.library],
  ['/wishlists', messages.nav.wishlists],
  ['/family', messages.nav.family],
  ['/links', messages.nav.links],
] as const;

/** The app's pages: in the header, and in player mode behind the parent menu. */
export function MainNav({ current }: { current: string }) {
  return (
    <nav aria-label={messages.nav.main}>
      <ul>
        {NAV.map(([to, label]) => (
          <li key={to}>
            <Link to={to} current={current === to || (to !== '/' && current.startsWith(to))}>
              {label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
