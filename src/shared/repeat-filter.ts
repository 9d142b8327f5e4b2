/**
 * Lets the first of a run of identical events through and holds back its repeats for a window:
 * a log line for each new kind of failure, not one per request while the failure lasts.
 */
export class RepeatFilter {
  private readonly seen = new Map<string, { until: number; repeats: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * undefined when `key` was let through within the window (counted as a repeat); otherwise
   * the number of repeats held back since it was last let through (0 the first time).
   */
  admit(key: string): number | undefined {
    const now = this.clock();
    const entry = this.seen.get(key);
    if (entry && now < entry.until) {
      entry.repeats += 1;
      return undefined;
    }
    if (this.seen.size > 100) this.forgetExpired(now);
    this.seen.set(key, { until: now + this.windowMs, repeats: 0 });
    return entry?.repeats ?? 0;
  }

  private forgetExpired(now: number): void {
    for (const [key, entry] of this.seen) if (entry.until <= now) this.seen.delete(key);
  }
}
