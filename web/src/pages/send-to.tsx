import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { useLiveReads, usePollWhileWaiting } from '../events.js';
import { formatTime } from '../format.js';
import { finished, type LinkJob, type LinkView } from '../links.js';
import { messages } from '../messages.js';
import { ErrorText, Link } from '../ui.js';
import { JobProgress } from './link-job.js';

const t = messages.links;

/**
 * A card's "Send to <service>" buttons, one per linked service: each pushes this card and shows
 * the copy's progress and outcome beside it, followed by the `link.job` events of that copy.
 */
export function SendTo({ cardId }: { cardId: string }) {
  const links = useSignal<LinkView[] | undefined>(undefined);
  useEffect(() => {
    void api.GET('/user/links').then(({ data }) => (links.value = data?.links.filter((l) => l.state === 'linked') ?? []));
  }, []);
  if (!links.value) return null;
  return (
    <section class="send-to" aria-labelledby="send-to-title">
      <h2 id="send-to-title">{t.sendTitle}</h2>
      {links.value.length === 0 && <p>{t.noneLinked}</p>}
      {links.value.map((link) => (
        <SendButton key={link.linkId} link={link} cardId={cardId} />
      ))}
      <p>
        <Link to="/links">{t.manage}</Link>
      </p>
    </section>
  );
}

function SendButton({ link, cardId }: { link: LinkView; cardId: string }) {
  const job = useSignal<LinkJob | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  const busy = useSignal(false);
  const { linkId } = link;
  const reread = async () => {
    const jobId = job.value?.jobId;
    if (!jobId) return;
    const { data } = await api.GET('/user/links/{linkId}/jobs/{jobId}', { params: { path: { linkId, jobId } } });
    if (data) job.value = data.job;
  };
  useLiveReads(['link.job'], (event) => {
    if (!event || event.ids?.jobId === job.value?.jobId) return reread();
  });
  const waiting = job.value !== undefined && !finished(job.value);
  usePollWhileWaiting(waiting, reread);

  const send = async () => {
    busy.value = true;
    error.value = undefined;
    const { data, error: refused, response } = await api.POST('/user/links/{linkId}/push', { params: { path: { linkId } }, body: { cardIds: [cardId] } });
    busy.value = false;
    if (data) job.value = data.job;
    else error.value = errorMessage(refused, response);
  };

  const current = job.value;
  const said = !current ? '' : outcomeOf(link.name, current);
  return (
    <div class="send">
      <button type="button" disabled={busy.value || waiting} onClick={() => void send()}>
        {t.sendTo(link.name)}
      </button>
      <ErrorText message={error.value} />
      <p role="status" class="status">
        {said}
      </p>
      {current && <JobProgress job={current} when={formatTime(current.createdAt)} />}
    </div>
  );
}

/** What became of the card, in a sentence: sending, sent (or already there), or why not. */
function outcomeOf(name: string, job: LinkJob): string {
  const card = job.cards[0];
  if (job.state === 'failed' || card?.state === 'failed') return t.sendFailed(name, card?.error ?? job.error ?? t.jobStates.failed!);
  if (!finished(job)) return t.sending(name);
  if (!card || card.state === 'copied' || card.state === 'unchanged') return t.sent(name);
  return `${name}: ${t.cardStates[card.state] ?? card.state}`;
}
