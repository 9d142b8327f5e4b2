import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
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

type Sdk = typeof import('@aws-sdk/client-s3');
let sdkLoading: Promise<Sdk> | undefined;
/**
 * The AWS SDK, loaded on first use: it is a quarter of the memory of a command that never uses
 * it (export and import on the file system, docs in bench/RESULTS.md).
 */
const loadSdk = (): Promise<Sdk> => (sdkLoading ??= import('@aws-sdk/client-s3'));

/**
 * Media in an S3-compatible object store, for many instances (AWS SDK v3). Bytes are staged on
 * local disk (`localDir`), hashed and checked there like the file-system store does, then put
 * under `<prefix>objects/<sha256>` whole: an object appears complete or not at all. ffmpeg reads
 * a local copy, fetched on first need into `localDir/cache`.
 */
export function createS3MediaStore(config: S3StoreConfig, localDir: string): MediaStore {
  const makeClient = (sdk: Sdk): S3Client => new sdk.S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    credentials: config.credentials,
    // Checksums only where S3 requires them: the SDK's default (a CRC32 trailer on aws-chunked
    // bodies) is not understood by every S3-compatible store, which would keep the framing.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const connecting = loadSdk().then((sdk) => ({ sdk, client: makeClient(sdk) }));
  // Not left unhandled when nothing is ever asked of the store; each use awaits it again.
  connecting.catch(() => {});
  const stagingDir = path.join(localDir, 'staging');
  const cacheDir = path.join(localDir, 'cache');
  const { bucket } = config;

  function key(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256 hex digest: ${sha256}`);
    return `${config.prefix}objects/${sha256}`;
  }
  const missing = (sdk: Sdk, err: unknown): boolean =>
    err instanceof sdk.S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');

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
          const { sdk, client } = await connecting;
          await client.send(
            new sdk.PutObjectCommand({ Bucket: bucket, Key: key(sha256), Body: createReadStream(tempPath), ContentLength: size }),
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
      const { sdk, client } = await connecting;
      try {
        const head = await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key(sha256) }));
        return { size: Number(head.ContentLength ?? 0) };
      } catch (err) {
        if (missing(sdk, err)) return undefined;
        throw err;
      }
    },

    read(sha256, range) {
      const out = new PassThrough();
      const objectKey = key(sha256);
      connecting
        .then(({ sdk, client }) =>
          client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: objectKey, Range: range ? `bytes=${range.start}-${range.end}` : undefined })),
        )
        .then((answer) => pipeline(answer.Body as Readable, out))
        .catch((err: Error) => out.destroy(err));
      return out;
    },

    async localPath(sha256) {
      const file = path.join(cacheDir, sha256);
      if (await stat(file).catch(() => undefined)) return file;
      await mkdir(cacheDir, { recursive: true });
      const temp = `${file}.${randomBytes(6).toString('hex')}.part`;
      const { sdk, client } = await connecting;
      const answer = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key(sha256) }));
      await pipeline(answer.Body as Readable, createWriteStream(temp));
      await rename(temp, file);
      return file;
    },

    async remove(sha256) {
      const { sdk, client } = await connecting;
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key(sha256) }));
      await rm(path.join(cacheDir, sha256), { force: true });
    },

    async *list() {
      const { sdk, client } = await connecting;
      let token: string | undefined;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: `${config.prefix}objects/`, ContinuationToken: token }),
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
