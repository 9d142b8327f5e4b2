import type { Readable } from 'node:stream';
import Busboy from 'busboy';
import { AppError, badRequest } from '../../shared/errors.js';

/**
 * Reads an uploaded image: the body itself (any content type, as the public clients send it:
 * `image/*`, `application/octet-stream`), or the first file of a `multipart/form-data` body (the
 * public icon tutorial posts a FormData). Images are small enough to hold (`maxBytes`); more is
 * refused with 413 as soon as it arrives. An empty body gives an empty buffer.
 */
export async function readImageBody(body: Readable | undefined, contentType: string | undefined, maxBytes: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  if (contentType && /^multipart\/form-data/i.test(contentType)) return readFirstFile(body, contentType, maxBytes);
  return collect(body, maxBytes);
}

const tooLarge = (maxBytes: number) => new AppError('payload-too-large', `images are limited to ${maxBytes} bytes`);

/** The bytes of an image sent inside JSON (`POST /icons`): as `JSON.stringify` writes a Buffer, or base64. */
export type JsonImage = string | { type: 'Buffer'; data: number[] };

/**
 * The largest JSON body that can carry an image of `maxBytes`: a Buffer as JSON takes up to four
 * characters a byte (`255,`), base64 fewer; the rest (the name) is small.
 */
export const jsonImageBodyLimit = (maxBytes: number): number => 4 * maxBytes + 64 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL = /^data:[^,;]*(;[^,;]*)*;base64,/i;

/**
 * The bytes of an image sent inside a JSON body, under the same size rule as a body of bytes.
 * yoto-js's `icons.upload` sends a Buffer, which JSON writes `{"type": "Buffer", "data": [...]}`;
 * a string is base64, with or without a `data:` URL's prefix. Anything else is not bytes.
 */
export function readJsonImage(file: JsonImage, maxBytes: number): Buffer {
  let bytes: Buffer;
  if (typeof file === 'string') {
    const text = file.replace(DATA_URL, '').replace(/\s+/g, '');
    if (text.length % 4 !== 0 || !BASE64.test(text)) throw badRequest("'file' is neither a Buffer nor base64 text");
    bytes = Buffer.from(text, 'base64');
  } else {
    bytes = Buffer.from(file.data);
  }
  if (bytes.length > maxBytes) throw tooLarge(maxBytes);
  return bytes;
}

async function collect(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        stream.destroy();
        throw tooLarge(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw badRequest('the upload ended before its body was complete');
  }
  return Buffer.concat(chunks);
}

function readFirstFile(body: Readable, contentType: string, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let parser: Busboy.Busboy;
    try {
      parser = Busboy({ headers: { 'content-type': contentType }, limits: { files: 1, fileSize: maxBytes, fields: 20 } });
    } catch (err) {
      reject(badRequest(`malformed multipart body: ${(err as Error).message}`));
      return;
    }
    let file: Promise<Buffer> | undefined;
    parser.on('file', (_name, stream) => {
      file ??= new Promise<Buffer>((res, rej) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('limit', () => rej(tooLarge(maxBytes)));
        stream.on('end', () => res(Buffer.concat(chunks)));
        stream.on('error', rej);
      });
    });
    parser.on('error', (err: Error) => reject(badRequest(`malformed multipart body: ${err.message}`)));
    parser.on('close', () => {
      if (!file) reject(badRequest('the multipart body holds no file'));
      else file.then(resolve, reject);
    });
    body.on('error', () => reject(badRequest('the upload ended before its body was complete')));
    body.pipe(parser);
  });
}
