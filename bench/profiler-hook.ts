/**
 * Loaded into the server under test (`node --import ./bench/profiler-hook.ts`) when the
 * benchmark profiles: SIGUSR2 starts the V8 CPU profiler, the next SIGUSR2 stops it and writes
 * the profile to BENCH_PROFILE_DIR. So a profile covers one scenario's measured load, not the
 * start-up, the fixtures or the warm-up (which `node --cpu-prof` would mix in). Nothing of this
 * is in src/: the server is the production one.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  let running = false;
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => {
      session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result)));
    });

  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      void post('Profiler.enable').then(() => post('Profiler.start'));
      return;
    }
    running = false;
    void post('Profiler.stop').then((result) => {
      const { profile } = result as { profile: unknown };
      const file = path.join(dir, `${Date.now()}-${process.pid}.cpuprofile`);
      // Written under a temporary name and renamed, so the benchmark never reads half a file.
      writeFileSync(`${file}.tmp`, JSON.stringify(profile));
      renameSync(`${file}.tmp`, file);
    });
  });
}
