/**
 * The idle streams of bench/events.ts, part 3, in a process of their own so that reading them
 * takes no CPU from the load generator (autocannon) measuring the server:
 * `tsx bench/event-streams-client.ts <base URL> <count>`, the tokens on standard input
 * (one a line). Opens `count` streams of `GET /user/family/events`, the tokens in turn, reads them (counting events), prints `ready` once all are open,
 * and on SIGTERM prints the events read and exits.
 */
import http from 'node:http';

const [base, countText] = process.argv.slice(2);
let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk as string;
const tokens = input.split('\n').filter(Boolean);
if (!base || !countText || tokens.length === 0) throw new Error('usage: event-streams-client.ts <base URL> <count> < tokens');
const count = Number(countText);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
let events = 0;
const requests: http.ClientRequest[] = [];

function open(bearer: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/user/family/events`, { headers: { authorization: `Bearer ${bearer}` }, agent });
    requests.push(req);
    req.once('error', reject);
    req.once('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      // Counted, not parsed: an event is one `data:` line.
      res.on('data', (chunk: string) => {
        for (let i = chunk.indexOf('\ndata: '); i >= 0; i = chunk.indexOf('\ndata: ', i + 1)) events++;
      });
      res.on('error', () => {});
      resolve();
    });
  });
}

for (let i = 0; i < count; i += 200) await Promise.all(Array.from({ length: Math.min(200, count - i) }, (_, j) => open(tokens[(i + j) % tokens.length]!)));
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  for (const req of requests) req.destroy();
  process.stdout.write(`events ${events}\n`, () => process.exit(0));
});
