import { setTimeout as sleep } from 'node:timers/promises';
import { Value } from '@sinclair/typebox/value';
import { pino } from 'pino';
import { instanceSecret } from './auth/media-url-secret.js';
import type { Config } from './config.js';
import type { Store } from './db/dialect.js';
import { migrateToLatest } from './db/migrate.js';
import { openStore } from './db/store.js';
import { createCardService } from './modules/cards/service.js';
import { createFamilyService } from './modules/families/service.js';
import { createLinkServiceFor, runLinkJobs } from './modules/links/links.js';
import { PullBody, PushBody, type Job, type JobCard, type Link } from './modules/links/schemas.js';
import type { LinkService } from './modules/links/service.js';
import { createMedia } from './modules/media/media.js';
import { createTrackMediaFiller } from './modules/media/track-media.js';
import { createTagger } from './shared/entity-tag.js';
import { badRequest } from './shared/errors.js';
import type { Log } from './shared/log.js';
import { formatBytes, textTable } from './shared/terminal-text.js';
import { jobProgressBar, jobProgressLine } from './modules/links/job-text.js';

/**
 * The `cardshelf link` commands (README, "Command line"): a member's linked services as an
 * operator sees them, and pulls and pushes queued through the links service (the rules of
 * `POST /user/links/{linkId}/pull|push`). A job is followed to its end with this process
 * running it (no server needed; it claims only its own job, under the same lease as the
 * servers, so a server running too never runs it twice). Refusals are the service's errors
 * (AppError, 4xx): the caller (cli/link.ts) makes them exit 2.
 */

/** How often a followed job is read. */
const FOLLOW_MS = 250;

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export interface LinkListOptions {
  user: string;
  jobs: number;
  json: boolean;
}

export interface LinkJobOptions {
  user: string;
  link: string;
  /** Absent: a pull of every MYO card of the remote account (a push requires it). */
  card?: string[];
  overwrite: boolean;
  wait: boolean;
  json: boolean;
}

/** The command's own log: the job runner's warnings and errors, as JSON lines on stderr. */
function commandLog(config: Readonly<Config>): Log {
  const quiet = pino.levels.values[config.logLevel] ?? Infinity;
  return pino({ level: quiet >= pino.levels.values.warn! ? config.logLevel : 'warn' }, pino.destination(2));
}

async function withLinks<T>(config: Readonly<Config>, work: (store: Store, links: LinkService, secret: string, log: Log) => Promise<T>): Promise<T> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const secret = await instanceSecret(config.mediaUrlSecret, config.auth, config.dataDir);
    const log = commandLog(config);
    return await work(store, createLinkServiceFor(store, config, { instanceSecret: secret, log }), secret, log);
  } finally {
    await store.db.destroy();
  }
}

export async function linkList(config: Readonly<Config>, opts: LinkListOptions): Promise<number> {
  const listed = await withLinks(config, async (_store, links) => {
    const all: { link: Link; jobs: Job[] }[] = [];
    for (const link of await links.list(opts.user)) all.push({ link, jobs: (await links.listJobs(opts.user, link.linkId)).slice(0, opts.jobs) });
    return all;
  });
  if (opts.json) {
    out(JSON.stringify({ links: listed.map(({ link, jobs }) => ({ ...link, jobs })) }));
    return 0;
  }
  if (listed.length === 0) {
    err(`link list: ${opts.user} has no links`);
    return 0;
  }
  out(textTable([['LINK', 'NAME', 'STATE', 'API'], ...listed.map(({ link }) => [link.linkId, link.name, link.reason ? `${link.state}: ${link.reason}` : link.state, link.apiBaseUrl])]));
  for (const { link, jobs } of listed) {
    if (jobs.length === 0) continue;
    out('');
    out(`jobs of ${link.linkId} (${link.name}), newest first:`);
    out(
      textTable([
        ['JOB', 'KIND', 'STATE', 'CARDS', 'FILES', 'BYTES', 'UPDATED'],
        ...jobs.map((j) => [j.jobId, j.kind, j.state, String(j.cards.length), `${j.files.done}/${j.files.total}`, formatBytes(j.bytes), j.updatedAt]),
      ]),
    );
  }
  return 0;
}

/** A card's outcome that makes the command fail (exit 1): the operator has something to do. */
const UNSETTLED = new Set<JobCard['state']>(['failed', 'conflict']);

export async function linkJob(config: Readonly<Config>, kind: 'pull' | 'push', opts: LinkJobOptions): Promise<number> {
  const body = { ...(opts.card ? { cardIds: opts.card } : {}), ...(opts.overwrite ? { overwrite: true } : {}) };
  // The API's body rules (how many ids, each one's length, none twice), checked here as the route checks them.
  const invalid = Value.Errors(kind === 'pull' ? PullBody : PushBody, body).First();
  if (invalid) throw badRequest(`--card: ${invalid.message}`);

  return withLinks(config, async (store, links, secret, log) => {
    const queued = kind === 'pull' ? await links.startJob(opts.user, opts.link, 'pull', body) : await links.startJob(opts.user, opts.link, 'push', { ...body, cardIds: opts.card ?? [] });
    if (!opts.wait) {
      if (opts.json) out(JSON.stringify({ job: queued }));
      else out(queued.jobId);
      err(`link ${kind}: queued job ${queued.jobId}; a running server runs it (cardshelf link list shows how it goes)`);
      return 0;
    }
    const started = performance.now();
    const job = await runHere(store, config, { links, secret, log, jobId: queued.jobId }, () => follow(links, opts.user, opts.link, queued.jobId));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (opts.json) out(JSON.stringify({ job }));
    else for (const card of job.cards) out([card.state, card.cardId ?? '-', card.remoteCardId ?? '-', card.title ?? '-', card.error ?? ''].join('\t'));
    const counts = new Map<string, number>();
    for (const card of job.cards) counts.set(card.state, (counts.get(card.state) ?? 0) + 1);
    const tally = [...counts].map(([state, n]) => `${n} ${state}`).join(', ') || 'no cards';
    err(`link ${kind} ${job.jobId}: ${job.state} in ${seconds} s: ${tally}; ${job.files.done} files, ${formatBytes(job.bytes)}${job.error ? `; ${job.error}` : ''}`);
    return job.state === 'done' && !job.cards.some((c) => UNSETTLED.has(c.state)) ? 0 : 1;
  });
}

/**
 * Runs `work` while this process runs the job: the media module (its transcode worker included,
 * as pulled audio is transcoded here) and the card service, wired as the server wires them.
 */
async function runHere<T>(
  store: Store,
  config: Readonly<Config>,
  deps: { links: LinkService; secret: string; log: Log; jobId: string },
  work: () => Promise<T>,
): Promise<T> {
  const media = createMedia(store, config, deps.secret, deps.log);
  // The services' writes bump the change counters; the tags they answer with are not used here.
  const tagger = createTagger(['cardshelf link']);
  const cards = createCardService(store, createFamilyService(store, config, tagger), tagger, createTrackMediaFiller());
  const runner = runLinkJobs(store, config, { links: deps.links, media, cards, log: deps.log }, { only: deps.jobId });
  try {
    return await work();
  } finally {
    await runner.close();
    await media.close();
  }
}

/** Reads the job until it ends, showing its progress on stderr: a bar on a terminal, else a line per change. */
async function follow(links: LinkService, userId: string, linkId: string, jobId: string): Promise<Job> {
  const terminal = process.stderr.isTTY ? process.stderr : undefined;
  let shown = '';
  for (;;) {
    const job = await links.readJob(userId, linkId, jobId);
    const ended = job.state === 'done' || job.state === 'failed';
    const line = terminal ? jobProgressBar(job, terminal.columns || 80) : jobProgressLine(job);
    if (line !== shown) {
      shown = line;
      if (terminal) {
        terminal.cursorTo(0);
        terminal.write(line);
        terminal.clearLine(1);
      } else {
        err(line);
      }
    }
    if (ended) {
      if (terminal) terminal.write('\n');
      return job;
    }
    await sleep(FOLLOW_MS);
  }
}
