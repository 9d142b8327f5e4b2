import type { TestApp } from './test-app.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  json: any;
  location: string | undefined;
}

/**
 * A browser (or a public client) talking to the app: form posts, a cookie jar that honours each
 * cookie's path, redirects not followed, so each step is seen.
 */
export class Browser {
  private readonly jar = new Map<string, { value: string; path: string }>();
  /** `address`: the client address the app sees (for the throttles, src/accounts/throttle.ts). */
  constructor(
    private readonly t: TestApp,
    private readonly address = '127.0.0.1',
  ) {}

  /** A script's JSON post (the passkey forms'), with this browser's cookies. */
  json(url: string, body: unknown): Promise<Answer> {
    return this.request('POST', url, undefined, body);
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>, jsonBody?: unknown): Promise<Answer> {
    const target = new URL(url, 'http://localhost');
    const path = target.pathname + target.search;
    const cookie = [...this.jar].filter(([, c]) => target.pathname.startsWith(c.path)).map(([name, c]) => `${name}=${c.value}`).join('; ');
    const raw = await this.t.app.inject({
      method,
      url: path,
      remoteAddress: this.address,
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(jsonBody !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      payload: form ? new URLSearchParams(form).toString() : jsonBody !== undefined ? JSON.stringify(jsonBody) : undefined,
    });
    for (const c of raw.cookies as { name: string; value: string; path?: string; expires?: Date; maxAge?: number }[]) {
      if ((c.expires && c.expires.getTime() < Date.now()) || c.maxAge === 0 || c.value === '') this.jar.delete(c.name);
      else this.jar.set(c.name, { value: c.value, path: c.path ?? '/' });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.body);
    } catch {
      json = undefined;
    }
    const location = raw.headers.location as string | undefined;
    return { status: raw.statusCode, headers: raw.headers, text: raw.body, json, location };
  }

  /** Follows redirects within the app until a page (or a redirect out of it) is answered. */
  async follow(answer: Answer): Promise<Answer> {
    let current = answer;
    for (let i = 0; i < 10 && current.location && this.isOurs(current.location); i++) current = await this.request('GET', current.location);
    return current;
  }

  isOurs(location: string): boolean {
    const url = new URL(location, 'http://localhost');
    return !/^https?:\/\/(127\.0\.0\.1|\[::1\])/.test(location) && !url.pathname.startsWith('/callback') && url.hostname !== 'evil.example';
  }
}

export const field = (html: string, name: string): string => {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no field ${name} in ${html.slice(0, 500)}`);
  return match[1]!;
};
export const formAction = (html: string): string => /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');

export async function tokenRequest(t: TestApp, form: Record<string, string>) {
  const raw = await t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
  return { status: raw.statusCode, body: JSON.parse(raw.body) as Record<string, any>, headers: raw.headers };
}

