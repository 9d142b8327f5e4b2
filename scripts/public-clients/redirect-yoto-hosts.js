// Preloaded (`node --import`) into yoto-nodejs-client's own commands by
// scripts/public-clients-sign-in.js and scripts/public-clients-devices.js. That client has no
// option for its base URLs: it calls https://login.yotoplay.com and https://api.yotoplay.com
// (constants in its code), through undici. undici keeps its global dispatcher on a process-wide
// symbol, shared by every copy of undici and by Node's fetch, so one dispatcher set here sends
// those two origins to Cardshelf (CARDSHELF_URL) without touching the client's code, as a
// hosts-file entry would. Its MQTT connects to the public broker's host name (a constant too);
// with BROKER_ADDRESS set, that name resolves to it, as a hosts-file entry would
// (scripts/public-clients/broker-tls.js serves the name there).
import dns from 'node:dns';
import { createRequire } from 'node:module';
import path from 'node:path';

const target = process.env.CARDSHELF_URL;
if (!target) throw new Error('CARDSHELF_URL is not set');
const redirected = new Set(['https://login.yotoplay.com', 'https://api.yotoplay.com']);

// The client's own undici (its dependency), found from the client's directory.
const require = createRequire(path.join(process.env.CLIENT_DIR ?? process.cwd(), 'package.json'));
const { Agent, setGlobalDispatcher } = require('undici');

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) => {
    const origin = String(options.origin);
    return dispatch(redirected.has(origin.replace(/\/$/, '')) ? { ...options, origin: target } : options, handler);
  }),
);

const brokerAddress = process.env.BROKER_ADDRESS;
if (brokerAddress) {
  const BROKER_HOST = 'aqrphjqbp3u2z-ats.iot.eu-west-2.amazonaws.com';
  // net and tls look names up through this property at connect time.
  const lookup = dns.lookup;
  dns.lookup = function lookupBroker(hostname, options, callback) {
    if (hostname !== BROKER_HOST) return lookup.apply(this, arguments);
    const done = typeof options === 'function' ? options : callback;
    const all = typeof options === 'object' && options !== null && options.all;
    process.nextTick(() => (all ? done(null, [{ address: brokerAddress, family: 4 }]) : done(null, brokerAddress, 4)));
    return undefined;
  };
}
