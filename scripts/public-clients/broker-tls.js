/**
 * The public broker's host name served by Cardshelf's MQTT endpoint, for the public clients whose
 * tests connect to that name (a constant in their code): a TLS front on a loopback address, port
 * 443, with a throwaway certificate for that name, passing the bytes on to Cardshelf's own port,
 * as the reverse proxy of a deployment behind TLS does (docs/deploy.md). The clients are told of
 * nothing but where the name points (the preload's DNS answer, or yoto_api's URL and PORT) and
 * that the certificate is trusted (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE): their own MQTT code,
 * `wss://<host>/mqtt`, runs unchanged. Used by scripts/public-clients-devices.js.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

export const PUBLIC_BROKER_HOST = 'aqrphjqbp3u2z-ats.iot.eu-west-2.amazonaws.com';

/**
 * Starts the front on `address`:443 (a loopback address of its own, so runs side by side do not
 * collide) towards `target` (Cardshelf's `host:port`). Its certificate (for the broker's name and
 * the address, valid a day) is written to `dir`; `caFile` is it, to be trusted.
 */
export async function startBrokerTls({ dir, address, target }) {
  const key = path.join(dir, 'broker-key.pem');
  const caFile = path.join(dir, 'broker-cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${PUBLIC_BROKER_HOST}`, '-addext', `subjectAltName=DNS:${PUBLIC_BROKER_HOST},IP:${address}`,
    '-keyout', key, '-out', caFile,
  ], { stdio: 'ignore' });
  const server = tls.createServer({ key: readFileSync(key), cert: readFileSync(caFile) }, (socket) => {
    const upstream = net.connect(target.port, target.host);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(443, address, resolve);
  });
  return { address, port: 443, caFile, close: () => new Promise((resolve) => server.close(resolve)) };
}
