import { describe, expect, it } from 'vitest';
import { webAppPolicy } from '../../src/http/security-headers.js';
import { builtInOrUnregistered, WEB_APP_CLIENT_ID } from '../../src/oauth/shims.js';
import { formatDuration, formatSize, naturalOrder } from '../../web/src/format.js';
import { moveBy, moveSelected, moveTo } from '../../web/src/reorder.js';

describe("the web app's rules, one at a time", () => {
  it('files sort naturally by name: 2 before 10, case aside', () => {
    expect(['10 c.mp3', 'b/2 b.mp3', '1 a.mp3', 'B/1 z.mp3'].sort(naturalOrder)).toEqual(['1 a.mp3', '10 c.mp3', 'B/1 z.mp3', 'b/2 b.mp3']);
    expect(['track10', 'Track9', 'track1'].sort(naturalOrder)).toEqual(['track1', 'Track9', 'track10']);
  });

  it('reordering moves one item and keeps the rest in order; moves past either end stop there', () => {
    const list = ['a', 'b', 'c', 'd'];
    expect(moveBy(list, 0, 1)).toEqual(['b', 'a', 'c', 'd']);
    expect(moveBy(list, 3, -1)).toEqual(['a', 'b', 'd', 'c']);
    expect(moveTo(list, 3, 0)).toEqual(['d', 'a', 'b', 'c']);
    expect(moveBy(list, 0, -1)).toEqual(list);
    expect(moveBy(list, 3, 5)).toEqual(list);
    expect(list).toEqual(['a', 'b', 'c', 'd']);
  });

  it('selected items move together, one place, stepping over the others; a block at an end stays', () => {
    const list = ['a', 'b', 'c', 'd', 'e'];
    const chosen = (set: string) => (x: string) => set.includes(x);
    expect(moveSelected(list, chosen('bd'), -1)).toEqual(['b', 'a', 'd', 'c', 'e']);
    expect(moveSelected(list, chosen('bd'), 1)).toEqual(['a', 'c', 'b', 'e', 'd']);
    expect(moveSelected(list, chosen('ab'), -1)).toEqual(list);
    expect(moveSelected(list, chosen('abd'), -1)).toEqual(['a', 'b', 'd', 'c', 'e']);
    expect(moveSelected(list, chosen('de'), 1)).toEqual(list);
  });

  it('durations and sizes go through Intl', () => {
    const seconds = new Intl.NumberFormat(undefined, { style: 'unit', unit: 'second', unitDisplay: 'narrow' }).format(5);
    expect(formatDuration(5)).toBe(seconds);
    expect(formatDuration(3723)).toMatch(/1.*2.*3/);
    expect(formatSize(999)).toBe(new Intl.NumberFormat(undefined, { style: 'unit', unit: 'byte', unitDisplay: 'short' }).format(999));
    expect(formatSize(1_500_000)).toBe(new Intl.NumberFormat(undefined, { style: 'unit', unit: 'megabyte', unitDisplay: 'short', maximumFractionDigits: 1 }).format(1.5));
  });

  it("the app's policy: nothing inline, this origin only, plus the media templates' origins", () => {
    const policy = webAppPolicy({ mediaUrlTemplate: 'https://media.example/files/{hash}', groupImageUrlTemplate: 'https://img.example/g/{imageId}' });
    expect(policy.scriptSrc).toEqual(["'self'"]);
    expect(policy.styleSrc).toEqual(["'self'"]);
    expect(policy.connectSrc).toEqual(["'self'"]);
    expect(policy.mediaSrc).toEqual(["'self'", 'blob:', 'https://media.example', 'https://img.example']);
    expect(Object.values(policy).flat().join(' ')).not.toMatch(/unsafe/);
  });

  it('the built-in client comes back to its own callback only, on the base URL; other ids stay unregistered', () => {
    const client = builtInOrUnregistered('https://shelf.example/')(WEB_APP_CLIENT_ID)!;
    expect(client).toMatchObject({ client_id: 'cardshelf-web', token_endpoint_auth_method: 'none', redirect_uris: ['https://shelf.example/app/callback'] });
    expect(client.grant_types).not.toContain('urn:ietf:params:oauth:grant-type:device_code');
    expect(builtInOrUnregistered('https://shelf.example')('other-app')).toMatchObject({ cardshelf_unregistered: true });
  });
});
