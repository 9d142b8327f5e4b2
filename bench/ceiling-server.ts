/**
 * The ceiling: a bare node:http server that answers every request with one response held in
 * memory (status, headers and body captured from Cardshelf). It reads the request body, as any
 * server must, and does nothing else: what it reaches under a load is the most that Node.js and
 * the load generator on this machine can do for that exchange.
 *
 * Run as a child of the benchmark (started by bench/ceiling.ts), which sends it {status, headers,
 * body (base64)} over IPC before each measurement and waits for 'ready'.
 */
import http from 'node:http';

interface Canned {
  status: number;
  headers: Record<string, string>;
  body: string;
}

let status = 200;
let headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' };
let body = Buffer.from('{}');

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(status, headers);
    res.end(body);
  });
});
// As Fastify's defaults: keep-alive connections stay open for the whole run.
server.keepAliveTimeout = 72_000;

process.on('message', (m: Canned) => {
  status = m.status;
  body = Buffer.from(m.body, 'base64');
  headers = { ...m.headers, 'content-length': String(body.length) };
  process.send?.('ready');
});
process.on('disconnect', () => process.exit(0));

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
});
