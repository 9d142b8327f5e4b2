import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.js';
import { refresh, tokens } from './auth.js';

export type Card = components['schemas']['Card'];
/** A card being made or edited: what the server generates may be missing. */
export type CardDraft = Partial<Card> & Pick<Card, 'title'>;
export type Chapter = NonNullable<NonNullable<Card['content']>['chapters']>[number];
export type Track = Chapter['tracks'][number];
export type CardSummary = components['schemas']['CardSummary'];
export type Group = components['schemas']['Group'];
export type Wishlist = components['schemas']['Wishlist'];
export type Family = components['schemas']['Family'];
export type ErrorBody = components['schemas']['ErrorBody'];

/**
 * Every API call with the signed-in person's token; a 401 renews the token once (refresh) and
 * tries again, so an expired token is never the person's problem.
 */
async function authorizedFetch(request: Request): Promise<Response> {
  const again = request.clone();
  const send = (r: Request): Promise<Response> => {
    const token = tokens.value?.accessToken;
    if (token) r.headers.set('authorization', `Bearer ${token}`);
    return fetch(r);
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
