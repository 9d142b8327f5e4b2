/** Timestamps of the interface: ISO 8601, UTC, milliseconds. */
export const now = (): string => new Date().toISOString();
