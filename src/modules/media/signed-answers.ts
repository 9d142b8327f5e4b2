import type { CardRow } from '../../db/database.js';
import type { Tagger } from '../../shared/entity-tag.js';
import type { RawJson } from '../../shared/raw-json.js';
import { mediaRefHashesIn } from '../cards/media-ref.js';
import { wishlistMedia } from '../wishlists/rules.js';
import type { MediaUrlSigner } from './media-urls.js';
import type { MediaReadRights } from './read-rights.js';

/** An answer whose media references are signed for its reader: its tag, and its body on demand. */
export interface SignedAnswer {
  tag: string;
  body: () => Promise<RawJson>;
}

/**
 * Answers with signed media URLs (a card read with `playable=true`, wishlists but with
 * `format=raw`), made in one place: the references the reader may read (read-rights.ts) become
 * signed, expiring URLs, the others stay as stored. Their tags name the data, the signing window
 * and key, and the reader, since the URLs change with each; one clock reading serves the tag and
 * the URLs, so both name the same window. Rights are read when the body is made: one that
 * changes (an upload, a move to another family) shows in the next window's answer, and a URL
 * already handed out stays valid until it expires.
 */
export interface SignedAnswers {
  /** A card `reader` may read (`access`: its owner and origin), as `cards.read` found it. */
  forCard(reader: string, read: { card: RawJson; tag: string; access: Pick<CardRow, 'user_id' | 'origin'> }): SignedAnswer;
  /** A wishlist answer (one, a list, a shared one) of tag `tag`, made by `render`. */
  forWishlist(reader: string, tag: string, render: () => Promise<RawJson>): SignedAnswer;
  /**
   * For a wishlist write answered inside its transaction, where no other query may run: the
   * rights are read now, from `content` (what the write will hold), and the signing reads nothing.
   */
  wishlistSigner(reader: string, content: RawJson): Promise<(json: RawJson) => RawJson>;
  /** The tag a signed read by `reader` would carry now: a write's answer carries it. */
  tag(tag: string, reader: string): string;
}

export function createSignedAnswers(deps: { signer: MediaUrlSigner; rights: MediaReadRights; tagger: Tagger }): SignedAnswers {
  const { signer, rights, tagger } = deps;
  const signedTag = (tag: string, reader: string, at: number): string =>
    tagger.signed(tag, { window: signer.window(at), keyId: signer.keyId, reader });

  /** The wishlist references of `json` that `reader` may read (their rights, not the owner's). */
  async function wishlistReadable(reader: string, json: RawJson): Promise<Set<string>> {
    const { hashes, byItem } = wishlistMedia(json);
    return hashes.size === 0 ? new Set() : rights.forNamedCards(reader, hashes, byItem);
  }

  return {
    forCard(reader, { card, tag, access }) {
      const at = Date.now();
      return {
        tag: signedTag(tag, reader, at),
        body: async () => signer.signAll(card, await rights.forCard(reader, access, mediaRefHashesIn(card)), at),
      };
    },

    forWishlist(reader, tag, render) {
      const at = Date.now();
      return {
        tag: signedTag(tag, reader, at),
        body: async () => {
          const json = await render();
          return signer.signAll(json, await wishlistReadable(reader, json), at);
        },
      };
    },

    async wishlistSigner(reader, content) {
      const readable = await wishlistReadable(reader, content);
      return (json) => signer.signAll(json, readable);
    },

    tag: (tag, reader) => signedTag(tag, reader, Date.now()),
  };
}
