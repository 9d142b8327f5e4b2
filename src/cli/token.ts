import type { Command } from 'commander';
import { loadOrCreateSigningKey, mintToken } from '../auth/local-issuer.js';
import type { Config } from '../config.js';
import { duration } from './option-parsers.js';
import { EXIT, Refused, type Run } from './run.js';

/** `cardshelf token`. */
export function tokenCommand(program: Command, run: Run): void {
  program
    .command('token')
    .description('print a token signed by the local issuer on stdout')
    .requiredOption('--sub <id>', "the user id (the token's subject), e.g. 'auth0|alice'")
    .option('--scope <scopes>', "space-separated scopes, e.g. 'user:content:manage family:library:manage' or 'admin'", '')
    .option('--expires-in <duration>', 'lifetime: 30s, 15m, 2h, 7d', duration, '1h')
    .action(run(token));
}

interface TokenOptions {
  sub: string;
  scope: string;
  expiresIn: string;
}

export async function token(config: Readonly<Config>, opts: TokenOptions): Promise<number> {
  if (config.auth.mode !== 'local') throw new Refused('token: tokens come from the external issuer (AUTH_ISSUER is set)');
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  const jwt = await mintToken(key, {
    sub: opts.sub,
    scope: opts.scope,
    expiresIn: opts.expiresIn,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  });
  process.stdout.write(`${jwt}\n`);
  return EXIT.OK;
}
