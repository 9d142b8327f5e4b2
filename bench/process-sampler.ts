/**
 * CPU time and resident memory of the processes under test (a server and its cluster workers,
 * the ceiling, the load generator) and of the whole machine, read from /proc (Linux).
 */
import { readdir, readFile } from 'node:fs/promises';

/** A process and its descendants (cluster workers), from /proc. */
export async function processTree(pid: number): Promise<number[]> {
  const pids = [pid];
  try {
    const parents = new Map<number, number>();
    for (const d of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      try {
        const s = await readFile(`/proc/${d}/stat`, 'utf8');
        // The command name is in parentheses and may hold spaces: the fields start after ')'.
        parents.set(Number(d), Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // the process ended meanwhile
      }
    }
    for (let i = 0; i < pids.length; i++) {
      for (const [child, parent] of parents) if (parent === pids[i]) pids.push(child);
    }
  } catch {
    // no /proc: only the process itself
  }
  return pids;
}

/** Resident memory of a process and its descendants, in MB: now, and the peak of each summed. */
export async function memoryOf(pid: number): Promise<{ rssMB: number; peakMB: number }> {
  let rss = 0;
  let peak = 0;
  for (const p of await processTree(pid)) {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { rssMB: Math.round(rss / 1024), peakMB: Math.round(peak / 1024) };
}

/** Clock ticks of CPU (user + system) used by these processes so far. */
export async function cpuTicks(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const p of pids) {
    try {
      const s = await readFile(`/proc/${p}/stat`, 'utf8');
      const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone, or no /proc
    }
  }
  return ticks;
}

/** Busy clock ticks of the whole machine so far (all cores). */
export async function machineBusyTicks(): Promise<number> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    const total = n.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th values.
    return total - (n[3] ?? 0) - (n[4] ?? 0);
  } catch {
    return 0;
  }
}

/** Clock ticks a second (USER_HZ): 100 on every Linux this runs on. */
export const TICKS_PER_SECOND = 100;
