import type { Command } from 'commander';
import type { LinkJobOptions, LinkListOptions } from '../link-commands.js';
import { AppError } from '../shared/errors.js';
import { positiveInt } from './option-parsers.js';
import { Refused, type Run } from './run.js';

/** `cardshelf link list|pull|push`. */
export function linkCommands(program: Command, run: Run): void {
  const link = program
    .command('link')
    .description("a member's linked services (accounts on another service; they are linked in the web app or through /user/links)");
  link
    .command('list')
    .description("a member's links and their latest jobs, as a table on stdout")
    .requiredOption('--user <id>', "the member's user id (the `sub` of their tokens)")
    .option('--jobs <n>', 'the latest jobs shown of each link', positiveInt, 5)
    .option('--json', 'print {"links": [...]} (each link as GET /user/links/{linkId} answers it, with its jobs) instead', false)
    .action(run(async (config, opts: LinkListOptions) => linkCommand(async (links) => links.linkList(config, opts))));
  for (const kind of ['pull', 'push'] as const) {
    const command = link
      .command(kind)
      .description(
        kind === 'pull'
          ? "bring cards home: copy the link's remote cards (every MYO card, or those named) to the member here"
          : "send cards out: copy the member's own MYO cards to the link's remote",
      )
      .requiredOption('--user <id>', "the member's user id (the `sub` of their tokens)")
      .requiredOption('--link <linkId>', 'one of their links (cardshelf link list)');
    const cards = (id: string, all: string[] | undefined): string[] => [...(all ?? []), id];
    if (kind === 'pull') command.option('--card <remoteCardId>', 'a remote card id; repeat for more (default: every MYO card of the remote account)', cards);
    else command.requiredOption('--card <cardId>', "one of the member's cards here; repeat for more", cards);
    command
      .option('--overwrite', `copy cards changed on both sides too (${kind === 'pull' ? 'the remote' : 'this side'} wins)`, false)
      .option('--no-wait', 'queue the job and exit, printing its id; a running server runs it')
      .option('--json', 'print the job as GET /user/links/{linkId}/jobs/{jobId} answers it, instead of a line a card', false)
      .action(run(async (config, opts: LinkJobOptions) => linkCommand(async (links) => links.linkJob(config, kind, opts))));
  }
}

/**
 * The link commands, loaded when run (they bring the media module: sharp, the transcoder); what
 * the links service refuses (a link not the member's, not signed in, a card not theirs) is the
 * operator's to fix: exit 2.
 */
async function linkCommand(work: (links: typeof import('../link-commands.js')) => Promise<number>): Promise<number> {
  try {
    return await work(await import('../link-commands.js'));
  } catch (e) {
    if (e instanceof AppError && e.statusCode < 500) throw new Refused(`link: ${e.message}`);
    throw e;
  }
}
