/**
 * The ceiling: one exchange with Cardshelf captured to the byte, and the bare node:http child
 * (bench/ceiling-server.ts) that replays it from memory under the same load.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { benchDir, rootDir } from './paths.js';

export interface Captured {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One exchange with exact bytes: what the ceiling will replay. */
export function exchange(base: string, method: string, urlPath: string, headers: Record<string, string>, body?: string): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${urlPath}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const kept: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          // Hop-by-hop and per-response headers are the ceiling server's own to write.
          if (['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k)) continue;
          if (v !== undefined) kept[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        resolve({ status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface Ceiling {
  port: number;
  pid: number;
  serve(captured: Captured): Promise<void>;
  stop(): Promise<void>;
}

export async function startCeiling(): Promise<Ceiling> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(benchDir, 'ceiling-server.ts')], {
    cwd: rootDir,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await once(child, 'message')) as [{ port: number }];
  return {
    port: first.port,
    pid: child.pid as number,
    async serve(captured) {
      const ready = once(child, 'message');
      child.send({ status: captured.status, headers: captured.headers, body: captured.body.toString('base64') });
      await ready;
    },
    async stop() {
      const done = once(child, 'exit');
      child.disconnect();
      await done;
    },
  };
}
