/** A player's own page in the app (router.ts paths, under /app). */
export const playerPath = (deviceId: string): string => `/family/players/${encodeURIComponent(deviceId)}`;
