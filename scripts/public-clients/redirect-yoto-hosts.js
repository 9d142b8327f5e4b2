// Preloaded (`node --import`) into yoto-nodejs-client's own commands by
// scripts/public-clients-sign-in.js. That client has no option for its base URLs: it calls
// https://login.yotoplay.com and https://api.yotoplay.com (constants in its code), through
// undici. undici keeps its global dispatcher on a process-wide symbol, shared by every copy of
// undici and by Node's fetch, so one dispatcher set here sends those two origins to Cardshelf
// (CARDSHELF_URL) without touching the client's code, as a hosts-file entry would.
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
