/** What a card says of its audio: the sizes its editor summed from its tracks' transcodes. */
interface Sized {
  metadata?: { media?: { fileSize?: number } };
}

/**
 * The bytes of audio the cards hold, as each card states it (`metadata.media.fileSize`): a file on
 * two cards counts twice, covers and icons not at all. The server's quota counts files once and
 * those images too; it offers no figure of what is used, so this is the cards' own sum.
 */
export const cardsBytes = (cards: readonly Sized[]): number =>
  cards.reduce((sum, card) => sum + Math.max(0, card.metadata?.media?.fileSize ?? 0), 0);
