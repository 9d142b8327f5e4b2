import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port free a moment ago, for what must be told its port before it starts: a server
 * whose PUBLIC_BASE_URL (the issuer) names it, a private PostgreSQL, an S3 stand-in. Another
 * process may take it in between; servers that can print their port start on PORT=0 instead
 * (processes.ts startServer).
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
