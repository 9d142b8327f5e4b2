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

/** Whether this browser is a player (the app then opens /be-player as the player, signed in or not). */
export const hasPlayerCredential = (): boolean => localStorage.getItem(CREDENTIAL) !== null;

export function loadCredential(): PlayerCredential | undefined {
  const raw = localStorage.getItem(CREDENTIAL);
  return raw ? (JSON.parse(raw) as PlayerCredential) : undefined;
}

export function storeCredential(credential: PlayerCredential | undefined): void {
  if (credential) localStorage.setItem(CREDENTIAL, JSON.stringify(credential));
  else localStorage.removeItem(CREDENTIAL);
}

