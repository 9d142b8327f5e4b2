// The part of tar-stream 2.x (https://github.com/mafintosh/tar-stream) Cardshelf uses. The
// package ships no types, and @types/tar-stream is not part of the shared install.
declare module 'tar-stream' {
  import type { Readable, Writable } from 'node:stream';

  export interface Headers {
    name: string;
    size?: number;
    mode?: number;
    mtime?: Date;
    type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo' | 'contiguous-file' | 'pax-header' | 'pax-global-header' | 'gnu-long-link-path' | 'gnu-long-path' | null;
    uid?: number;
    gid?: number;
  }

  export interface Pack extends Readable {
    /** A whole entry from a buffer; the callback runs once the pack took it (backpressure). */
    entry(header: Headers, buffer: Buffer | string, callback?: (err?: Error | null) => void): Writable;
    /** An entry streamed in; `header.size` must be exact. */
    entry(header: Headers, callback?: (err?: Error | null) => void): Writable;
    finalize(): void;
  }

  export interface Extract extends Writable {
    on(event: 'entry', listener: (header: Required<Pick<Headers, 'name' | 'size'>> & Headers, stream: Readable, next: (err?: Error) => void) => void): this;
    on(event: 'finish' | 'close', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }

  export function pack(): Pack;
  export function extract(): Extract;
}
