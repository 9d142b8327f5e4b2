import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { CARDSHELF_VERSION } from './shared/version.js';
import { clientCommands } from './cli/client.js';
import { exportCommand } from './cli/export.js';
import { importCommand } from './cli/import.js';
import { linkCommands } from './cli/link.js';
import { mediaCommands } from './cli/media.js';
import { migrateCommand } from './cli/migrate.js';
import { EXIT, Refused, err, type Run } from './cli/run.js';
import { seedCommand } from './cli/seed.js';
import { serveCommand } from './cli/serve.js';
import { tokenCommand } from './cli/token.js';
import { userCommands } from './cli/user.js';

export { EXIT } from './cli/run.js';

/**
 * Runs one command; resolves to its exit code (EXIT). Options are all checked before anything
 * runs, and the environment is read only once the command is known to be well-formed, so
 * `--help` and a mistyped option never touch a database. Only `token`, `seed --demo` (their
 * token), `media gc` (its report), `user list` (the accounts), `client list` (the apps) and `link` (links, jobs, each card's outcome) write to stdout; help and `--version` go to stdout too, everything else to stderr.
 */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.OK;
  const run: Run =
    (command) =>
    async (...args) => {
      code = await command(loadConfig(), ...args);
    };

  const program = new Command('cardshelf')
    .description("A server for families' audio-card libraries. Settings come from the environment (README.md).")
    .version(CARDSHELF_VERSION, '-V, --version', 'print the version and exit')
    .helpCommand('help [command]', 'show the help of a command')
    .showHelpAfterError('(cardshelf --help lists the commands; cardshelf <command> --help their options)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  // In the order `cardshelf --help` lists them.
  for (const add of [serveCommand, migrateCommand, tokenCommand, seedCommand, userCommands, clientCommands, linkCommands, mediaCommands, exportCommand, importCommand]) {
    add(program, run);
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    // Commander has already written its message (or the help) to stderr / stdout.
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    if (e instanceof ConfigError || e instanceof Refused) {
      err(e instanceof Refused ? `cardshelf: ${e.message}` : e.message);
      return EXIT.USAGE;
    }
    throw e;
  }
}
