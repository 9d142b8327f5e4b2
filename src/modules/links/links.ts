import type { Config } from '../../config.js';
import type { Store } from '../../db/dialect.js';
import type { Log } from '../../shared/log.js';
import type { CardService } from '../cards/service.js';
import type { Media } from '../media/media.js';
import { startJobRunner, type JobRunner } from './job-runner.js';
import type { RemotePolicy } from './remote-http.js';
import { createSecretBox } from './secret-box.js';
import { createLinkService, type LinkService } from './service.js';
import { startSignInPoller } from './sign-in-poller.js';

/** Remote answers of JSON are bounded by this (a card is at most a MiB here; lists are longer). */
const MAX_JSON_BYTES = 5 * 1024 * 1024;

export interface Links {
  service: LinkService;
  /** Stops polling sign-ins and claiming jobs; running jobs go back to the queue. */
  close(): Promise<void>;
}

type PolicyFor = (link: { api_base_url: string; auth_base_url: string }) => RemotePolicy;

/** What a link's remote may be reached at, from the configuration. */
function remotePolicies(config: Readonly<Config>): PolicyFor {
  return (link) => ({
    trustedHosts: [new URL(link.api_base_url).hostname, new URL(link.auth_base_url).hostname],
    allowPrivateNetworks: config.links.allowPrivateNetworks,
    timeoutMs: config.links.remoteTimeoutMs,
    maxJsonBytes: MAX_JSON_BYTES,
  });
}

/**
 * The service alone, without background work: what reads links and queues jobs (the command
 * line). `instanceSecret` must be the servers' (their tokens are sealed with a key derived from it).
 */
export function createLinkServiceFor(
  store: Store,
  config: Readonly<Config>,
  deps: { instanceSecret: string; log: Log; onQueued?: () => void },
): LinkService {
  return createLinkService(store, {
    box: createSecretBox(deps.instanceSecret),
    policyFor: remotePolicies(config),
    onQueued: deps.onQueued ?? (() => {}),
    log: deps.log,
  });
}

/**
 * Claims and runs pulls and pushes: every job (a server), or only the one named (the command
 * line following its own job, leaving the rest to the servers).
 */
export function runLinkJobs(
  store: Store,
  config: Readonly<Config>,
  deps: { links: LinkService; media: Media; cards: CardService; log: Log },
  opts: { only?: string } = {},
): JobRunner {
  const { media } = deps;
  return startJobRunner(
    store,
    {
      links: deps.links,
      local: {
        store,
        cards: deps.cards,
        uploads: media.uploads,
        images: media.images,
        mediaStore: media.mediaStore,
        publicBaseUrl: config.publicBaseUrl,
        maxAudioBytes: config.media.maxAudioBytes,
        maxImageBytes: media.maxImageBytes,
        maxCardBytes: config.bodyLimit,
        transcodeWaitMs: config.links.mediaTimeoutMs,
      },
      policyFor: remotePolicies(config),
      log: deps.log,
    },
    {
      jobsPerInstance: config.links.jobsPerInstance,
      filesPerJob: config.links.filesPerJob,
      leaseSeconds: config.links.leaseSeconds,
      idleMs: 2000,
      mediaTimeoutMs: config.links.mediaTimeoutMs,
      ...(opts.only ? { only: opts.only } : {}),
    },
  );
}

/** The links module, wired from the configuration: its service, the sign-in poller and the job runner. */
export function createLinks(
  store: Store,
  config: Readonly<Config>,
  deps: { media: Media; cards: CardService; instanceSecret: string; log: Log },
): Links {
  const { log } = deps;
  const box = createSecretBox(deps.instanceSecret);
  const policyFor = remotePolicies(config);
  let kick = (): void => {};
  const service = createLinkService(store, { box, policyFor, onQueued: () => kick(), log });
  const poller = startSignInPoller(store, { box, policyFor, log });
  const runner = runLinkJobs(store, config, { links: service, media: deps.media, cards: deps.cards, log });
  kick = () => runner.kick();
  return {
    service,
    async close() {
      poller.close();
      await runner.close();
    },
  };
}
