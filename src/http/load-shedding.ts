import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** under-pressure's handler for this route (`admitUnderPressure` lets it answer anyway). */
    pressureHandler?: (request: FastifyRequest, reply: FastifyReply, type: string, value: number | undefined) => Promise<void> | void;
  }
}

export interface LoadSheddingOptions {
  /** Event-loop delay (ms) above which requests are refused; 0 turns the check off. */
  maxEventLoopDelayMs: number;
  /** Heap in use (bytes) above which requests are refused; 0 turns the check off. */
  maxHeapUsedBytes: number;
}

/** Seconds a refused client is told to wait: about one sampling period and then some. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Refuses requests while the process is overloaded (sampled every second), with 503
 * `unavailable` and Retry-After in the error shape, so that the requests already admitted
 * finish instead of every request timing out. Routes that must answer under pressure (liveness,
 * metrics) say so with `config.pressureHandler: admitUnderPressure`.
 */
export async function registerLoadShedding(app: FastifyInstance, opts: LoadSheddingOptions): Promise<void> {
  if (opts.maxEventLoopDelayMs === 0 && opts.maxHeapUsedBytes === 0) return;
  await app.register(underPressure, {
    maxEventLoopDelay: opts.maxEventLoopDelayMs,
    maxHeapUsedBytes: opts.maxHeapUsedBytes,
    pressureHandler: async (request, _reply, type, value) => {
      request.log.warn({ type, value }, 'under pressure: request refused');
      throw new AppError('unavailable', 'the server is overloaded; try again shortly', {
        'retry-after': String(RETRY_AFTER_SECONDS),
      });
    },
  });
}

/** A route's `config.pressureHandler` that lets its requests through under pressure. */
export const admitUnderPressure = (): undefined => undefined;
