/** Query parameters whose values are credentials: whoever reads the log could use the URL. */
const SECRET_PARAMETERS = ['signature'];

/**
 * `url` as the request log shows it: a signed URL's `signature` (media and upload URLs) is
 * replaced by `REDACTED`, however its name is encoded; `expires` stays, to tell an expired URL
 * from a forged one.
 */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  const secret = SECRET_PARAMETERS.filter((name) => params.has(name));
  if (secret.length === 0) return url;
  for (const name of secret) params.set(name, 'REDACTED');
  return `${url.slice(0, q)}?${params.toString()}`;
}
