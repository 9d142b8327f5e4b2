import { signal, type Signal } from '@preact/signals';
import { api } from '../api.js';
import type { paths } from '../api-types.js';
import { messages } from '../messages.js';

/** An icon as the picker offers it: `ref` is what a card's `display.icon16x16` holds. */
export interface PickerIcon {
  ref: string;
  url: string;
  title: string;
  tags: string[];
  own: boolean;
}

type Listed = paths['/media/displayIcons/user/yoto']['get']['responses'][200]['content']['application/json']['displayIcons'][number];

/** The public icons, fetched once a visit (they change when an operator seeds); one's own, again at every opening. */
export const publicIcons: Signal<PickerIcon[] | undefined> = signal(undefined);
export const ownIcons: Signal<PickerIcon[] | undefined> = signal(undefined);

const toPicker = (icon: Listed, own: boolean, n: number): PickerIcon => ({
  ref: `yoto:#${icon.mediaId}`,
  url: icon.url,
  // One's own icons uploaded before they were titled are numbered, never shown by their hash.
  title: icon.title || (own ? messages.icons.ownUntitled(n + 1) : messages.icons.untitled),
  tags: icon.publicTags ?? [],
  own,
});

const ownList = (data: { displayIcons: Listed[] }): PickerIcon[] => data.displayIcons.map((icon, n) => toPicker(icon, true, n));

/** One's own icons, fetched again: one may have been uploaded since. */
export async function refreshOwnIcons(): Promise<void> {
  const { data } = await api.GET('/media/displayIcons/user/me');
  if (data) ownIcons.value = ownList(data);
}

/** The fetch of both lists under way or done, shared by every picker of the page; forgotten when it failed, to be tried again. */
let fetched: Promise<void> | undefined;

/** Both lists, fetched once however many pickers a page shows. */
export function ensureIcons(): Promise<void> {
  fetched ??= Promise.all([api.GET('/media/displayIcons/user/yoto'), api.GET('/media/displayIcons/user/me')]).then(([pub, own]) => {
    if (pub.data) publicIcons.value = pub.data.displayIcons.map((icon, n) => toPicker(icon, false, n));
    if (own.data) ownIcons.value = ownList(own.data);
    if (!pub.data || !own.data) fetched = undefined;
  });
  return fetched;
}

/** The hash a reference names (`yoto:#<hash>` and `service:#<hash>` name the same icon). */
export const hashOf = (ref: string): string => ref.replace(/^[a-z]+:#/, '');
