import { fileTypeFromBuffer } from 'file-type';
import { isAudioType } from '../modules/media/audio-uploads.js';

/**
 * The first bytes of a media entry that its type is read from: enough for every container
 * Cardshelf stores (an MP3 whose ID3 tag runs past them is still recognised as MP3).
 */
export const SNIFF_BYTES = 64 * 1024;

/** The type of media bytes as `file-type` reads them from their start, as uploads are typed. */
export async function sniffType(start: Buffer): Promise<string | undefined> {
  return (await fileTypeFromBuffer(start))?.mime;
}

/**
 * Why an archive's media object cannot be stored with the type it states, or undefined when
 * it can. The stated type is served as it is (`/media/public`, `/media/files`), so it must be
 * what the bytes are: the type read from them, or another audio type where both are audio (a
 * transcode is stored as `audio/mp4`, which `file-type` reads as `audio/x-m4a` or
 * `video/mp4`). Only images and audio, the types uploads accept, are stored at all: bytes of no
 * known type (HTML, SVG, text) never are.
 */
export function typeMismatch(stated: string, sniffed: string | undefined): string | undefined {
  if (sniffed === undefined) return `its bytes are of no type Cardshelf stores (it says ${stated})`;
  const stored = sniffed.startsWith('image/') || isAudioType(sniffed);
  if (!stored) return `its bytes are ${sniffed}, a type Cardshelf does not store (it says ${stated})`;
  if (stated === sniffed || (isAudioType(stated) && isAudioType(sniffed))) return undefined;
  return `it says ${stated}, but its bytes are ${sniffed}`;
}
