import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { useActions } from '../actions.js';
import { api, errorMessage } from '../api.js';
import { useLiveEvents, useLiveReads, usePollWhileWaiting } from '../events.js';
import { formatTime } from '../format.js';
import { cardIdsOf, finished, signInAddress, type LinkJob, type LinkView } from '../links.js';
import { messages } from '../messages.js';
import { ConfirmButton } from '../confirm-button.js';
import { ErrorText, Page, Status } from '../ui.js';
import { JobProgress } from './link-job.js';

const t = messages.links;

/**
 * Linked services (issue 34): the member's links, each with its sign-in code while it waits, its
 * copies and what they did; a form to link another. Links and copies change at the remote's pace:
 * the live events `link.changed` and `link.job` say when, polling stands in while the stream is down.
 */
export function LinksPage() {
  const links = useSignal<LinkView[] | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  const status = useSignal('');
  /** A link just made: its sign-in box takes the focus once shown. */
  const focusOn = useSignal<string | undefined>(undefined);
  const load = async () => {
    const { data, error: e, response } = await api.GET('/user/links');
    if (data) {
      links.value = data.links;
      error.value = undefined;
    } else error.value = errorMessage(e, response);
  };
  useEffect(() => void load(), []);
  useLiveEvents(['link.changed'], load);
  usePollWhileWaiting(links.value?.some((l) => l.state === 'signing-in') ?? false, load);

  return (
    <Page title={t.title}>
      <p>{t.intro}</p>
      <h2>{t.yours}</h2>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      {links.value === undefined ? (
        !error.value && <p>{messages.common.loading}</p>
      ) : links.value.length === 0 ? (
        <p>{t.none}</p>
      ) : (
        <ul class="links">
          {links.value.map((link) => (
            <LinkItem
              key={link.linkId}
              link={link}
              focus={focusOn.value === link.linkId}
              reload={load}
              onUnlinked={(name) => (status.value = t.unlinked(name))}
            />
          ))}
        </ul>
      )}
      <LinkForm
        onCreated={async (linkId) => {
          await load();
          focusOn.value = linkId;
        }}
      />
    </Page>
  );
}

function LinkItem({ link, focus, reload, onUnlinked }: { link: LinkView; focus: boolean; reload: () => Promise<void>; onUnlinked: (name: string) => void }) {
  const jobs = useSignal<LinkJob[]>([]);
  const chosen = useSignal('');
  const signInBox = useRef<HTMLDivElement>(null);
  const loadJobs = async () => {
    const { data } = await api.GET('/user/links/{linkId}/jobs', { params: { path: { linkId: link.linkId } } });
    if (data) jobs.value = data.jobs;
  };
  const { error, status, act } = useActions(loadJobs);
  // The link's state said as it changes, next to it (the sign-in is finished in another tab).
  const previous = useRef(link.state);
  useEffect(() => {
    if (previous.current === 'signing-in' && link.state === 'linked') status.value = t.nowLinked(link.name);
    previous.current = link.state;
    void loadJobs();
  }, [link.state]);
  useEffect(() => {
    if (focus) signInBox.current?.focus();
  }, [focus]);

  // A copy's progress: the job named by the event is read again; one not listed yet, or missed events, read the list.
  useLiveReads(['link.job'], async (event) => {
    const jobId = event?.ids?.jobId;
    if (!event || event.ids?.linkId !== link.linkId || !jobId || !jobs.value.some((j) => j.jobId === jobId)) {
      if (!event || event.ids?.linkId === link.linkId) await loadJobs();
      return;
    }
    const { data } = await api.GET('/user/links/{linkId}/jobs/{jobId}', { params: { path: { linkId: link.linkId, jobId } } });
    if (data) jobs.value = jobs.value.map((j) => (j.jobId === jobId ? data.job : j));
  });
  usePollWhileWaiting(jobs.value.some((j) => !finished(j)), loadJobs);

  const pull = (cardIds?: string[]) =>
    act(api.POST('/user/links/{linkId}/pull', { params: { path: { linkId: link.linkId } }, body: cardIds ? { cardIds } : {} }), t.pullStarted);
  const pullChosen = async () => {
    const ids = cardIdsOf(chosen.value);
    if (ids.length === 0) {
      error.value = t.noIds;
      return;
    }
    if (await pull(ids)) chosen.value = '';
  };
  const unlink = async () => {
    const { error: refused, response } = await api.DELETE('/user/links/{linkId}', { params: { path: { linkId: link.linkId } } });
    if (refused) {
      error.value = errorMessage(refused, response);
      return;
    }
    onUnlinked(link.name);
    await reload();
  };

  const address = signInAddress(link);
  const headingId = `link-${link.linkId}`;
  return (
    <li class="link" aria-labelledby={headingId}>
      <h3 id={headingId}>{link.name}</h3>
      <p>
        {t.state(link.name, t.states[link.state] ?? link.state)} <span class="meta">({t.at(link.apiBaseUrl)})</span>
      </p>
      {link.state === 'failed' && link.reason && <p class="error">{t.failed(link.reason)}</p>}
      {link.state === 'signing-in' && (
        <div class="sign-in" ref={signInBox} tabIndex={-1} aria-labelledby={`code-${link.linkId}`}>
          <p>{t.codeIntro(link.name)}</p>
          <p id={`code-${link.linkId}`} class="user-code">
            <span class="visually-hidden">{t.code}: </span>
            {link.userCode}
          </p>
          {address && (
            <a class="button primary" href={address} target="_blank" rel="noopener noreferrer">
              {t.open(link.name)}
            </a>
          )}
          {link.expiresAt && <p class="meta">{t.expires(formatTime(link.expiresAt))}</p>}
        </div>
      )}
      {link.state === 'linked' && (
        <>
          <div class="toolbar">
            <button type="button" class="primary" onClick={() => void pull()}>
              {t.pullAll}
            </button>
          </div>
          <form
            class="pull-chosen"
            onSubmit={(e) => {
              e.preventDefault();
              void pullChosen();
            }}
          >
            <label for={`ids-${link.linkId}`}>{t.pullChosenLabel(link.name)}</label>
            <div class="toolbar">
              <input id={`ids-${link.linkId}`} value={chosen.value} autocomplete="off" spellcheck={false} onInput={(e) => (chosen.value = e.currentTarget.value)} />
              <button type="submit">{t.pullChosen}</button>
            </div>
          </form>
        </>
      )}
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <div class="toolbar">
        <ConfirmButton label={t.unlink(link.name)} question={t.confirmUnlink(link.name)} yes={t.yesUnlink} onConfirm={unlink} />
      </div>
      {link.state === 'linked' && (
        <>
          <h4>{t.jobs(link.name)}</h4>
          {jobs.value.length === 0 ? (
            <p>{t.noJobs}</p>
          ) : (
            <ul class="jobs">
              {jobs.value.map((job) => (
                <li key={job.jobId}>
                  <JobProgress job={job} when={formatTime(job.createdAt)} />
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </li>
  );
}

const EMPTY = { name: '', apiBaseUrl: '', authBaseUrl: '', clientId: '', audience: '' };
type Fields = typeof EMPTY;

/** Linking a service: its addresses and client id (the public service's addresses a button away), then its sign-in code. */
function LinkForm({ onCreated }: { onCreated: (linkId: string) => Promise<void> }) {
  const fields = useSignal<Fields>(EMPTY);
  const busy = useSignal(false);
  const { error, status, act } = useActions(async () => undefined);
  const usePreset = async () => {
    const { data, error: e, response } = await api.GET('/user/links/presets');
    const preset = data?.presets[0];
    if (!preset) {
      error.value = errorMessage(e, response);
      return;
    }
    error.value = undefined;
    fields.value = { ...fields.value, name: preset.name, apiBaseUrl: preset.apiBaseUrl, authBaseUrl: preset.authBaseUrl, audience: preset.audience };
    status.value = t.presetFilled(preset.name);
  };
  const submit = async () => {
    busy.value = true;
    const { audience, ...rest } = fields.value;
    const answer = api.POST('/user/links', { body: { ...rest, ...(audience.trim() ? { audience: audience.trim() } : {}) } });
    const { data } = await answer;
    if (data) {
      fields.value = EMPTY;
      await onCreated(data.link.linkId);
    }
    await act(answer, t.started);
    busy.value = false;
  };
  const field = (name: keyof Fields, label: string, url: boolean, required = true, hint?: string) => {
    const props = {
      id: `link-${name}`,
      required,
      autocomplete: 'off',
      spellcheck: false,
      'aria-describedby': hint ? `link-${name}-hint` : undefined,
      value: fields.value[name],
      onInput: (e: { currentTarget: HTMLInputElement }) => (fields.value = { ...fields.value, [name]: e.currentTarget.value }),
    };
    return (
      <>
        <label for={props.id}>{label}</label>
        {url ? <input type="url" {...props} /> : <input type="text" {...props} />}
        {hint && (
          <p id={`link-${name}-hint`} class="hint">
            {hint}
          </p>
        )}
      </>
    );
  };
  return (
    <>
      <h2>{t.addTitle}</h2>
      <div class="toolbar">
        <button type="button" onClick={() => void usePreset()}>
          {t.usePreset}
        </button>
      </div>
      <form
        class="link-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <fieldset>
          <legend>{t.addTitle}</legend>
          {field('name', t.name, false)}
          {field('apiBaseUrl', t.apiBaseUrl, true)}
          {field('authBaseUrl', t.authBaseUrl, true)}
          {field('clientId', t.clientId, false, true, t.clientIdHint)}
          {field('audience', t.audience, false, false)}
        </fieldset>
        <button type="submit" class="primary" disabled={busy.value}>
          {t.link}
        </button>
      </form>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
    </>
  );
}
