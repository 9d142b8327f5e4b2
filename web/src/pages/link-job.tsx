import { formatSize } from '../format.js';
import type { LinkJob } from '../links.js';
import { messages } from '../messages.js';
import { Link } from '../ui.js';

const t = messages.links;

/** A copy's progress (files done of total, a bar, bytes) and each card's outcome, with a link to the card here. */
export function JobProgress({ job, when }: { job: LinkJob; when: string }) {
  const { done, total } = job.files;
  return (
    <div class="job" data-testid={`job-${job.jobId}`}>
      <p>
        <strong>{t.job(t.kinds[job.kind] ?? job.kind, t.jobStates[job.state] ?? job.state, when)}</strong>
        {job.error && <span class="error"> {job.error}</span>}
      </p>
      <p class="meta">
        {t.files(done, total)}, {t.bytes(formatSize(job.bytes))}{' '}
        {total > 0 && <progress aria-label={t.progress} max={total} value={done} />}
      </p>
      {job.cards.length > 0 && (
        <ul class="job-cards">
          {job.cards.map((c, i) => {
            const title = c.title ?? t.untitled(c.remoteCardId ?? c.cardId ?? String(i + 1));
            return (
              <li key={`${c.remoteCardId ?? ''}:${c.cardId ?? ''}:${i}`} class={c.state === 'failed' ? 'error' : undefined}>
                {c.cardId ? (
                  <Link to={`/cards/${encodeURIComponent(c.cardId)}`}>{title}</Link>
                ) : (
                  title
                )}
                : {t.cardStates[c.state] ?? c.state}
                {c.error && ` (${c.error})`}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
