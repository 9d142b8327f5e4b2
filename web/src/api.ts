import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.js';
import { refresh, tokens } from './auth.js';
import { messages } from './messages.js';

export type Card = components['schemas']['Card'];
/** A card being made or edited: what the server generates may be missing. */
export type CardDraft = Partial<Card> & Pick<Card, 'title'>;
export type Chapter = NonNullable<NonNullable<Card['content']>['chapters']>[number];
export type Track = Chapter['tracks'][number];
export type CardSummary = components['schemas']['CardSummary'];
export type Group = components['schemas']['Group'];
export type Wishlist = components['schemas']['Wishlist'];
export type SharedWishlist = paths['/wishlists/shared/{shareId}']['get']['responses'][200]['content']['application/json'];
export type Family = components['schemas']['Family'];
export type ErrorBody = components['schemas']['ErrorBody'];

/**
 * What a call answers when the server was not reached (the browser's fetch rejected: offline, or
 * the server down): a 503 in the documented error shape, as a gateway in front of the server
 * would answer. Every page then says "no connection" as it says any refusal, instead of an
 * uncaught "Failed to fetch", and keeps what the person typed.
 */
const unreachable = (): Response =>
  new Response(JSON.stringify({ error: { code: 'no-connection', message: messages.common.noConnection } } satisfies ErrorBody), {
    status: 503,
    headers: { 'content-type': 'application/json' },
  });

/** Whether the same call may succeed if tried again: the server's trouble or no connection (a 4xx is refused again). */
export const mayRetry = (response: Response): boolean => response.status >= 500;

/**
 * Every API call with the signed-in person's token; a 401 renews the token once (refresh) and
 * tries again, so an expired token is never the person's problem.
 */
async function authorizedFetch(request: Request): Promise<Response> {
  const again = request.clone();
  const send = async (r: Request): Promise<Response> => {
    const token = tokens.value?.accessToken;
    if (token) r.headers.set('authorization', `Bearer ${token}`);
    try {
      return await fetch(r);
    } catch (err) {
      // A call the page itself cancelled is no failure to show.
      if (err instanceof DOMException && err.name === 'AbortError') throw err;
      return unreachable();
    }
  };
  const answer = await send(request);
  if (answer.status !== 401 || !tokens.value?.refreshToken) return answer;
  return (await refresh()) ? send(again) : answer;
}

/** For bodies the typed client does not send (images as they are): the same token handling. */
export const authorizedRequest = (url: string, init: RequestInit): Promise<Response> => authorizedFetch(new Request(new URL(url, location.origin), init));

export const api = createClient<paths>({ baseUrl: location.origin, fetch: authorizedFetch });

/** The message of an error answer in the documented shape, or the status. */
export function errorMessage(error: unknown, response?: Response): string {
  const body = error as Partial<ErrorBody> | undefined;
  return body?.error?.message ?? (response ? `HTTP ${response.status}` : String(error));
}

/** The cover URL a card shows, if any (metadata.cover.imageL, as the public service writes it). */
export const coverOf = (card: Pick<Card, 'metadata'>): string | undefined => (card.metadata?.cover as { imageL?: string } | undefined)?.imageL;
