import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals the remote's tokens (and the device code) at rest: AES-256-GCM under a key derived
 * (HKDF-SHA256) from the instance's secret, the same root every instance and worker sharing the
 * deployment derives its media URL secret from (auth/media-url-secret.ts). The row's id is the
 * additional data, so a sealed value copied into another row does not open. Changing the
 * secret makes every link fail to refresh: its member links again.
 */
const INFO = 'cardshelf linked-service tokens v1';
const VERSION = 'v1';

export interface SecretBox {
  seal(plain: string, rowId: string): string;
  /** The plain text, or undefined when it does not open (another key, another row, tampered). */
  open(sealed: string, rowId: string): string | undefined;
}

export function createSecretBox(instanceSecret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', instanceSecret, Buffer.alloc(0), INFO, 32));
  return {
    seal(plain, rowId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(rowId));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed, rowId) {
      const [version, iv, body] = sealed.split('.');
      if (version !== VERSION || !iv || !body) return undefined;
      try {
        const bytes = Buffer.from(body, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(rowId));
        decipher.setAuthTag(bytes.subarray(bytes.length - 16));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
