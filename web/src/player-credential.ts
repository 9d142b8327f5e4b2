import { signal } from '@preact/signals';

/**
 * A browser player's credential (docs/api.md, "Registering a player"): kept in localStorage, so
 * the tablet stays a player across reloads and
 * restarts, and apart from any member's sign-in (sessionStorage, auth.ts).
 */
const CREDENTIAL = 'cardshelf:player';

export interface PlayerCredential {
  deviceId: string;
  name: string;
  accessToken: string;
}

function load(): PlayerCredential | undefined {
  const raw = localStorage.getItem(CREDENTIAL);
  return raw ? (JSON.parse(raw) as PlayerCredential) : undefined;
}

/** A signal, so the app switches to player mode (no menu) the moment the browser becomes a player. */
const credential = signal<PlayerCredential | undefined>(load());

/** Whether this browser is a player (the app then opens /be-player as the player, signed in or not). */
export const hasPlayerCredential = (): boolean => credential.value !== undefined;

export const loadCredential = (): PlayerCredential | undefined => credential.value;

export function storeCredential(next: PlayerCredential | undefined): void {
  if (next) localStorage.setItem(CREDENTIAL, JSON.stringify(next));
  else localStorage.removeItem(CREDENTIAL);
  credential.value = next;
}
