import type { Db } from '../../db/unit-of-work.js';
import * as repo from './repository.js';
import type { IdRange, LoggedEvent } from './repository.js';

/**
 * An instance's place in the log (table `live_events`): which events it has handed to its
 * streams. Ids are ordered within a family only (publish.ts): while one family's write is
 * between its insert and its commit, another family's later id may commit first. So the place is
 * not one id but a floor (every id at or below it was read, or never will be) and above it the
 * ids read and the holes between them. Each read asks for what is above the highest id read and
 * for the holes, and hands on each event once. A hole is an event still being written, or one
 * that never will be (its transaction rolled back): a hole still empty at a read begun
 * `holeGraceMs` after it was found is given up.
 *
 * A stream's own order does not depend on this: its family's ids commit in order, so it receives
 * them in order, whatever the holes of other families.
 */
export interface LogFollower {
  /**
   * Places the follower at the log's present: what has committed counts as read (it is not
   * handed on); what is still being written will be.
   */
  begin(): Promise<void>;
  /** The events committed since the last read, each once, in id order, at most `limit`; `full` when more may wait. */
  read(limit: number): Promise<{ events: LoggedEvent[]; full: boolean }>;
}

/** Holes asked for in one read, the oldest first (the others wait for a later read). */
const MAX_HOLES_ASKED = 64;
/** Ids read at once while the follower places itself. */
const ID_BATCH = 5_000;

interface Hole extends IdRange {
  /** When it was found (ms since the epoch). */
  since: number;
}

export function createLogFollower(db: Db, opts: { holeGraceMs: number; now?: () => number }): LogFollower {
  const clock = opts.now ?? Date.now;
  let floor = 0;
  /** The highest id read. */
  let top = 0;
  /** Ids above the floor that were read (handed on). */
  const read = new Set<number>();
  /** The ids above the floor and at or below `top` not read yet, in id order. */
  let holes: Hole[] = [];
  /** Reads one at a time: two reads at once would hand an event on twice. */
  let turn: Promise<unknown> = Promise.resolve();
  /** Whether `begin` placed it: until then a read hands nothing on (it would hand on the whole log). */
  let placed = false;

  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = turn.then(task, task);
    turn = run.catch(() => undefined);
    return run;
  };

  /** Records ids read above `top` (in order), the holes between them, and the new `top`. */
  function advanceTop(ids: readonly number[], at: number): void {
    for (const id of ids) {
      if (id <= top) continue;
      if (id > top + 1) holes.push({ from: top + 1, to: id - 1, since: at });
      top = id;
    }
  }

  /** Removes `id` from the holes (it was read). */
  function fill(id: number): void {
    const i = holes.findIndex((h) => h.from <= id && id <= h.to);
    const hole = holes[i];
    if (!hole) return;
    const parts = [
      ...(hole.from < id ? [{ ...hole, to: id - 1 }] : []),
      ...(id < hole.to ? [{ ...hole, from: id + 1 }] : []),
    ];
    holes.splice(i, 1, ...parts);
  }

  /** Gives up the holes asked for in a read begun after their grace, and raises the floor. */
  function settle(asked: readonly Hole[], readAt: number): void {
    // `fill` may have split an asked hole: what is left of it goes too.
    const givenUp = asked.filter((h) => h.since + opts.holeGraceMs <= readAt);
    if (givenUp.length > 0) holes = holes.filter((h) => !givenUp.some((g) => g.from <= h.from && h.to <= g.to));
    const newFloor = holes[0] ? holes[0].from - 1 : top;
    if (newFloor <= floor) return;
    floor = newFloor;
    for (const id of read) if (id <= floor) read.delete(id);
  }

  return {
    begin: () =>
      exclusive(async () => {
        // Events written longer ago than the grace are committed or given up; those after may
        // still be in flight. What has committed of them counts as read.
        placed = false;
        const at = clock();
        floor = top = await repo.lastIdWrittenBy(db, new Date(at - opts.holeGraceMs).toISOString());
        read.clear();
        holes = [];
        for (;;) {
          const ids = await repo.eventIdsAfter(db, top, ID_BATCH);
          advanceTop(ids, at);
          for (const id of ids) read.add(id);
          if (ids.length < ID_BATCH) break;
        }
        settle([], at);
        placed = true;
      }),

    read: (limit) =>
      exclusive(async () => {
        if (!placed) return { events: [], full: false };
        const readAt = clock();
        const asked = holes.slice(0, MAX_HOLES_ASKED);
        // Padded to a power of two by repeating the last: a handful of statement shapes.
        const ranges: IdRange[] = asked.map(({ from, to }) => ({ from, to }));
        const last = ranges.at(-1);
        while (last && ranges.length & (ranges.length - 1)) ranges.push(last);
        const rows = await repo.eventsAboveOrIn(db, top, ranges, limit);
        const events: LoggedEvent[] = [];
        for (const row of rows) {
          if (row.id <= floor || read.has(row.id)) continue;
          if (row.id <= top) fill(row.id);
          read.add(row.id);
          events.push(row);
        }
        advanceTop(
          rows.map((r) => r.id),
          readAt,
        );
        settle(asked, readAt);
        return { events, full: rows.length >= limit };
      }),
  };
}
