/**
 * The ceiling of the media benchmark: a bare node:http server streaming one file from disk, with
 * the same headers Cardshelf sends and single byte ranges. FILE and PORT come from the
 * environment; it prints its port on stdout once listening.
 */
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';

const file = process.env.FILE as string;
const size = statSync(file).size;

const server = http.createServer((req, res) => {
  const headers: Record<string, string> = {
    'content-type': 'audio/mp4',
    etag: '"x"',
    'accept-ranges': 'bytes',
    'cache-control': 'private, max-age=3600, immutable',
  };
  const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (match) {
    const start = Number(match[1]);
    const end = Math.min(Number(match[2]), size - 1);
    res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': String(end - start + 1) });
    createReadStream(file, { start, end }).pipe(res);
    return;
  }
  res.writeHead(200, { ...headers, 'content-length': String(size) });
  createReadStream(file).pipe(res);
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
