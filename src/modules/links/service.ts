import type { LinkJobRow, LinkRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { inUnitOfWork, userLock, type Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import { newUrlSafeId } from '../../shared/ids.js';
import type { Log } from '../../shared/log.js';
import { publish } from '../events/publish.js';
import { findCard } from '../cards/queries.js';
import { refreshTokens, revokeToken, RefreshRefused, startDeviceFlow, type RemoteTokens, type SignInTarget } from './device-sign-in.js';
import { RemoteError, type RemotePolicy } from './remote-http.js';
import * as repo from './repository.js';
import { MAX_JOBS_KEPT_PER_LINK, MAX_LINKS_PER_USER, REFRESH_MARGIN_MS, REVOKE_TIMEOUT_MS } from './rules.js';
import type { CreateLinkBody, Job, JobCard, Link, PullBody, PushBody } from './schemas.js';
import type { SecretBox } from './secret-box.js';

/**
 * Linked services (issue 34; docs/api.md "Linked services"): a member's accounts on other
 * services that speak this interface, signed in with the remote's own device flow; pulls and
 * pushes of cards run as jobs (job-runner.ts).
 */
export interface LinkService {
  create(userId: string, body: CreateLinkBody): Promise<Link>;
  /**
   * Starts the remote's sign-in again for a link (failed, moved here, or to change accounts): its
   * pairings stay, so cards copied before are still known.
   */
  signInAgain(userId: string, linkId: string): Promise<Link>;
  list(userId: string): Promise<Link[]>;
  read(userId: string, linkId: string): Promise<Link>;
  /** Forgets the link (its tokens revoked at the remote first, as far as it answers). */
  remove(userId: string, linkId: string): Promise<void>;
  startJob(userId: string, linkId: string, kind: 'pull', body: PullBody): Promise<Job>;
  startJob(userId: string, linkId: string, kind: 'push', body: PushBody): Promise<Job>;
  readJob(userId: string, linkId: string, jobId: string): Promise<Job>;
  listJobs(userId: string, linkId: string): Promise<Job[]>;
  /** A fresh access token of a linked link (refreshed when near expiry, or when `stale` is the one held). */
  accessToken(linkId: string, stale?: string): Promise<string>;
  /** The link's row (jobs read its URLs); not-found once unlinked. */
  linkRow(linkId: string): Promise<LinkRow>;
}

export interface LinkDeps {
  box: SecretBox;
  /** What a remote may be reached at (remote-http.ts), for this link's hosts. */
  policyFor: (link: Pick<LinkRow, 'api_base_url' | 'auth_base_url'>) => RemotePolicy;
  /** Wakes this instance's job runner (a job was queued). */
  onQueued(): void;
  log: Log;
}

export function targetOf(link: Pick<LinkRow, 'auth_base_url' | 'client_id' | 'audience'>): SignInTarget {
  return { authBaseUrl: link.auth_base_url, clientId: link.client_id, audience: link.audience };
}

/** An absolute http(s) URL without credentials, query or fragment, its trailing slashes cut. */
export function baseUrlOf(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${field} must be an http(s) URL`);
  if (url.username || url.password) throw badRequest(`${field} must not carry a user name or password`);
  if (url.search || url.hash) throw badRequest(`${field} must not carry a query or fragment`);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

export function linkView(row: LinkRow): Link {
  const signingIn = row.state === 'signing-in';
  return {
    linkId: row.link_id,
    name: row.name,
    apiBaseUrl: row.api_base_url,
    authBaseUrl: row.auth_base_url,
    clientId: row.client_id,
    audience: row.audience,
    state: row.state,
    ...(row.reason ? { reason: row.reason } : {}),
    ...(signingIn && row.user_code ? { userCode: row.user_code } : {}),
    ...(signingIn && row.verification_uri ? { verificationUri: row.verification_uri } : {}),
    ...(signingIn && row.verification_uri_complete ? { verificationUriComplete: row.verification_uri_complete } : {}),
    ...(signingIn && row.expires_at ? { expiresAt: row.expires_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function jobView(row: LinkJobRow): Job {
  return {
    jobId: row.job_id,
    linkId: row.link_id,
    kind: row.kind,
    state: row.state,
    ...(row.error ? { error: row.error } : {}),
    cards: JSON.parse(row.cards) as JobCard[],
    files: { done: Number(row.files_done), total: Number(row.files_total) },
    bytes: Number(row.bytes),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A link's change, on its member's live events (in the transaction that makes it). */
export async function publishLinkChanged(trx: Trx, store: Store, row: Pick<LinkRow, 'link_id' | 'user_id' | 'state'>): Promise<void> {
  await publish(trx, store.dialect, {
    kind: 'link.changed',
    audience: { userId: row.user_id },
    ids: { linkId: row.link_id },
    read: `/user/links/${row.link_id}`,
    state: row.state,
  });
}

/** A job's progress, on its member's live events. */
export async function publishJobProgress(trx: Trx, store: Store, row: LinkJobRow): Promise<void> {
  await publish(trx, store.dialect, {
    kind: 'link.job',
    audience: { userId: row.user_id },
    ids: { linkId: row.link_id, jobId: row.job_id },
    read: `/user/links/${row.link_id}/jobs/${row.job_id}`,
    state: row.state,
    files: { done: Number(row.files_done), total: Number(row.files_total) },
    bytes: Number(row.bytes),
  });
}

/**
 * The link has no sign-in to use (the remote refused the refresh, or it was never or no longer
 * linked): every call of a job would fail alike, so the job fails as a whole (job-runner.ts).
 */
export class SignInLost extends AppError {
  constructor(message: string) {
    super('bad-request', message);
    this.name = 'SignInLost';
  }
}

/** A remote that failed to answer, as the caller's error: 502 with what went wrong (never a token). */
export function remoteFailed(err: unknown, what: string): AppError {
  const detail = err instanceof RemoteError || err instanceof Error ? err.message : String(err);
  return new AppError('remote-failed', `${what}: ${detail}`);
}

const tooManyLinks = (): AppError => badRequest(`a member may hold at most ${MAX_LINKS_PER_USER} links: unlink one first`);

/** The remote's device flow started for `link`: the fields of a link signing in. */
async function startSignIn(
  policy: RemotePolicy,
  box: SecretBox,
  link: Pick<LinkRow, 'link_id' | 'auth_base_url' | 'client_id' | 'audience'>,
): Promise<Pick<LinkRow, 'state' | 'reason' | 'user_code' | 'verification_uri' | 'verification_uri_complete' | 'expires_at' | 'device_code_sealed' | 'poll_interval' | 'next_poll_at'>> {
  let flow;
  try {
    flow = await startDeviceFlow(policy, targetOf(link));
  } catch (err) {
    throw remoteFailed(err, "the remote's sign-in did not start");
  }
  return {
    state: 'signing-in',
    reason: null,
    user_code: flow.userCode,
    verification_uri: flow.verificationUri,
    verification_uri_complete: flow.verificationUriComplete,
    expires_at: new Date(Date.now() + flow.expiresInSeconds * 1000).toISOString(),
    device_code_sealed: box.seal(flow.deviceCode, link.link_id),
    poll_interval: flow.intervalSeconds,
    next_poll_at: new Date(Date.now() + flow.intervalSeconds * 1000).toISOString(),
  };
}

export function createLinkService(store: Store, deps: LinkDeps): LinkService {
  const { db } = store;
  const { box, policyFor, log } = deps;
  /** One refresh at a time per link in this process: two jobs share its result. */
  const refreshing = new Map<string, Promise<string>>();

  /**
   * Revokes a refresh token at the remote after the link forgot it (RFC 7009), without keeping
   * the member waiting: forgetting it here is what the member asked for, and a remote that is
   * slow or does not answer cannot stop or delay that. Bounded by its own short time limit.
   */
  function revokeLater(link: LinkRow, refreshToken: string): void {
    const policy = { ...policyFor(link), timeoutMs: Math.min(policyFor(link).timeoutMs, REVOKE_TIMEOUT_MS) };
    revokeToken(policy, targetOf(link), refreshToken).catch((err: unknown) =>
      log.warn({ linkId: link.link_id, err: err instanceof Error ? err.message : String(err) }, 'the remote did not revoke the link'),
    );
  }

  async function own(userId: string, linkId: string): Promise<LinkRow> {
    const row = await repo.findLink(db, linkId);
    if (!row || row.user_id !== userId) throw notFound(`link ${linkId}`);
    return row;
  }

  async function saveTokens(link: LinkRow, tokens: RemoteTokens): Promise<string> {
    const at = now();
    await repo.updateLink(db, link.link_id, {
      access_token_sealed: box.seal(tokens.accessToken, link.link_id),
      access_expires_at: new Date(Date.now() + tokens.expiresInSeconds * 1000).toISOString(),
      // A remote that does not rotate keeps the refresh token it gave.
      ...(tokens.refreshToken ? { refresh_token_sealed: box.seal(tokens.refreshToken, link.link_id) } : {}),
      updated_at: at,
    });
    return tokens.accessToken;
  }

  async function refresh(link: LinkRow): Promise<string> {
    const refreshToken = link.refresh_token_sealed ? box.open(link.refresh_token_sealed, link.link_id) : undefined;
    if (!refreshToken) return failLink(link, 'the sign-in cannot be read (the instance secret changed): link it again');
    try {
      return await saveTokens(link, await refreshTokens(policyFor(link), targetOf(link), refreshToken));
    } catch (err) {
      if (err instanceof RefreshRefused) return failLink(link, err.message);
      throw err;
    }
  }

  async function failLink(link: LinkRow, reason: string): Promise<never> {
    await db.transaction().execute(async (trx) => {
      if (await repo.updateLinkIf(trx, link.link_id, 'linked', { state: 'failed', reason, access_token_sealed: null, refresh_token_sealed: null, updated_at: now() })) {
        await publishLinkChanged(trx, store, { ...link, state: 'failed' });
      }
    });
    throw new SignInLost(`link ${link.link_id}: ${reason}`);
  }

  async function startJob(userId: string, linkId: string, kind: 'pull' | 'push', body: PullBody | PushBody): Promise<Job> {
    const link = await own(userId, linkId);
    if (link.state !== 'linked') throw badRequest(`link ${linkId} is not signed in (${link.state}): link it again`);
    if (kind === 'push') {
      const refused: string[] = [];
      for (const cardId of body.cardIds ?? []) {
        const card = await findCard(db, cardId);
        if (!card || card.origin !== 'myo' || card.user_id !== userId || card.deleted === 1) refused.push(cardId);
      }
      if (refused.length > 0) throw badRequest(`only your own MYO cards can be sent; not: ${refused.join(', ')}`);
    }
    const at = now();
    const row: LinkJobRow = {
      job_id: newUrlSafeId(),
      link_id: linkId,
      user_id: userId,
      kind,
      state: 'queued',
      request: JSON.stringify({ ...(body.cardIds ? { cardIds: body.cardIds } : {}), overwrite: body.overwrite === true }),
      cards: '[]',
      files_done: 0,
      files_total: 0,
      bytes: 0,
      error: null,
      attempts: 0,
      lease_until: null,
      created_at: at,
      updated_at: at,
    };
    await db.transaction().execute(async (trx) => {
      await repo.insertJob(trx, row);
      await repo.trimJobs(trx, linkId, MAX_JOBS_KEPT_PER_LINK);
      await publishJobProgress(trx, store, row);
    });
    deps.onQueued();
    return jobView(row);
  }

  return {
    async create(userId, body) {
      const apiBaseUrl = baseUrlOf(body.apiBaseUrl, 'apiBaseUrl');
      const authBaseUrl = baseUrlOf(body.authBaseUrl, 'authBaseUrl');
      // Before the remote is asked anything; again when the link is written.
      if ((await repo.countLinks(db, userId)) >= MAX_LINKS_PER_USER) throw tooManyLinks();
      const linkId = newUrlSafeId();
      const identity = { link_id: linkId, auth_base_url: authBaseUrl, client_id: body.clientId, audience: body.audience ?? null };
      const signingIn = await startSignIn(policyFor({ api_base_url: apiBaseUrl, auth_base_url: authBaseUrl }), box, identity);
      const at = now();
      const row: LinkRow = {
        ...identity,
        user_id: userId,
        name: body.name,
        api_base_url: apiBaseUrl,
        ...signingIn,
        refresh_token_sealed: null,
        access_token_sealed: null,
        access_expires_at: null,
        created_at: at,
        updated_at: at,
      };
      // Counted again under the member's lock: links made at once cannot pass the limit together.
      await inUnitOfWork(store, [userLock(userId)], async (trx) => {
        if ((await repo.countLinks(trx, userId)) >= MAX_LINKS_PER_USER) throw tooManyLinks();
        await repo.insertLink(trx, row);
        await publishLinkChanged(trx, store, row);
      });
      return linkView(row);
    },

    async signInAgain(userId, linkId) {
      const link = await own(userId, linkId);
      const signingIn = await startSignIn(policyFor(link), box, link);
      const old = link.refresh_token_sealed ? box.open(link.refresh_token_sealed, linkId) : undefined;
      const row: LinkRow = { ...link, ...signingIn, access_token_sealed: null, access_expires_at: null, refresh_token_sealed: null, updated_at: now() };
      await db.transaction().execute(async (trx) => {
        await repo.updateLink(trx, linkId, { ...signingIn, access_token_sealed: null, access_expires_at: null, refresh_token_sealed: null, updated_at: row.updated_at });
        await publishLinkChanged(trx, store, row);
      });
      // The sign-in it replaces ends at the remote too (as far as it answers).
      if (old) revokeLater(link, old);
      return linkView(row);
    },

    async list(userId) {
      return (await repo.listLinks(db, userId)).map(linkView);
    },

    async read(userId, linkId) {
      return linkView(await own(userId, linkId));
    },

    async remove(userId, linkId) {
      const link = await own(userId, linkId);
      const refreshToken = link.refresh_token_sealed ? box.open(link.refresh_token_sealed, linkId) : undefined;
      await db.transaction().execute(async (trx) => {
        if (await repo.deleteLink(trx, linkId)) await publishLinkChanged(trx, store, { ...link, state: 'failed' });
      });
      if (refreshToken) revokeLater(link, refreshToken);
    },

    startJob,

    async readJob(userId, linkId, jobId) {
      await own(userId, linkId);
      const job = await repo.findJob(db, jobId);
      if (!job || job.link_id !== linkId) throw notFound(`job ${jobId}`);
      return jobView(job);
    },

    async listJobs(userId, linkId) {
      await own(userId, linkId);
      return (await repo.listJobs(db, linkId, MAX_JOBS_KEPT_PER_LINK)).map(jobView);
    },

    async accessToken(linkId, stale) {
      const link = await repo.findLink(db, linkId);
      if (!link || link.state !== 'linked') throw new SignInLost(`link ${linkId} is not signed in${link?.reason ? ` (${link.reason})` : ''}`);
      const held = link.access_token_sealed ? box.open(link.access_token_sealed, linkId) : undefined;
      const fresh = link.access_expires_at !== null && Date.parse(link.access_expires_at) - REFRESH_MARGIN_MS > Date.now();
      if (held && fresh && held !== stale) return held;
      const running = refreshing.get(linkId);
      if (running) return running;
      const next = refresh(link).finally(() => refreshing.delete(linkId));
      refreshing.set(linkId, next);
      return next;
    },

    async linkRow(linkId) {
      const row = await repo.findLink(db, linkId);
      if (!row) throw notFound(`link ${linkId}`);
      return row;
    },
  };
}
