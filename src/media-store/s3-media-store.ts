import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { SHA256_HEX, type MediaStore, type StagedObject } from './media-store.js';
import { stageToFile, sweepDir } from './staging.js';

export interface S3StoreConfig {
  bucket: string;
  /** Key prefix inside the bucket ('' or ending in '/'). */
  prefix: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, a local server); unset: AWS. */
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default credential chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/**
 * Media in an S3-compatible object store, for many instances (AWS SDK v3). Bytes are staged on
 * local disk (`localDir`), hashed and checked there like the file-system store does, then put
 * under `<prefix>objects/<sha256>` whole: an object appears complete or not at all. ffmpeg reads
 * a local copy, fetched on first need into `localDir/cache`.
 */
export function createS3MediaStore(config: S3StoreConfig, localDir: string): MediaStore {
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    credentials: config.credentials,
    // Checksums only where S3 requires them: the SDK's default (a CRC32 trailer on aws-chunked
    // bodies) is not understood by every S3-compatible store, which would keep the framing.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const stagingDir = path.join(localDir, 'staging');
  const cacheDir = path.join(localDir, 'cache');
  const { bucket } = config;

  function key(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256 hex digest: ${sha256}`);
    return `${config.prefix}objects/${sha256}`;
  }
  const missing = (err: unknown): boolean =>
    err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');

  return {
    async stage(body, maxBytes) {
      const { path: tempPath, sha256, size } = await stageToFile(stagingDir, body, maxBytes);
      let settled = false;
      const staged: StagedObject = {
        sha256,
        size,
        path: tempPath,
        async commit() {
          if (settled) return;
          await client.send(
            new PutObjectCommand({ Bucket: bucket, Key: key(sha256), Body: createReadStream(tempPath), ContentLength: size }),
          );
          settled = true;
          await rm(tempPath, { force: true });
        },
        async discard() {
          if (settled) return;
          settled = true;
          await rm(tempPath, { force: true });
        },
      };
      return staged;
    },

    async stat(sha256) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key(sha256) }));
        return { size: Number(head.ContentLength ?? 0) };
      } catch (err) {
        if (missing(err)) return undefined;
        throw err;
      }
    },

    read(sha256, range) {
      const out = new PassThrough();
      client
        .send(new GetObjectCommand({ Bucket: bucket, Key: key(sha256), Range: range ? `bytes=${range.start}-${range.end}` : undefined }))
        .then((answer) => pipeline(answer.Body as Readable, out))
        .catch((err: Error) => out.destroy(err));
      return out;
    },

    async localPath(sha256) {
      const file = path.join(cacheDir, sha256);
      if (await stat(file).catch(() => undefined)) return file;
      await mkdir(cacheDir, { recursive: true });
      const temp = `${file}.${randomBytes(6).toString('hex')}.part`;
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key(sha256) }));
      await pipeline(answer.Body as Readable, createWriteStream(temp));
      await rename(temp, file);
      return file;
    },

    async remove(sha256) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key(sha256) }));
      await rm(path.join(cacheDir, sha256), { force: true });
    },

    async *list() {
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: `${config.prefix}objects/`, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) {
          const name = object.Key?.slice(`${config.prefix}objects/`.length) ?? '';
          if (SHA256_HEX.test(name)) yield { sha256: name, storedAtMs: object.LastModified?.getTime() ?? 0 };
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },

    // Local copies for ffmpeg go the same way: the object store keeps the bytes.
    sweepStaging: async (beforeMs) => (await sweepDir(stagingDir, beforeMs)) + (await sweepDir(cacheDir, beforeMs)),
  };
}
