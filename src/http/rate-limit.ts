import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';

/** At most `perMinute` requests a minute from one client address; 0 sets no limit. */
export async function registerRateLimit(app: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute > 0) await app.register(rateLimit, { max: perMinute, timeWindow: '1 minute' });
}
