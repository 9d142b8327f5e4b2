import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useActions } from '../../actions.js';
import { api, errorMessage } from '../../api.js';
import { useLiveReads } from '../../events.js';
import { formatTime } from '../../format.js';
import { messages } from '../../messages.js';
import type { DeviceStatus } from '../../player-controls.js';
import { navigate } from '../../router.js';
import { ErrorText, Link, Page, Status } from '../../ui.js';
import { ConfirmButton } from '../../confirm-button.js';
import './family.css';

const t = messages.playerSettings;

/** The settings this page edits: the API's names, their values strings as the API has them (docs/api.md, "Players"). */
const SETTINGS = ['dayTime', 'nightTime', 'maxVolumeLimit', 'nightMaxVolumeLimit'] as const;
type Setting = (typeof SETTINGS)[number];
type Settings = Record<Setting, string>;
/** Volume limits: 0 to 16, the API's VOLUME_LIMIT. */
const LIMIT = { min: 0, max: 16 };

/**
 * One player of the family (/family/players/<deviceId>): what it does now, kept live by its
 * `player.*` events; its name; its day and night times and volume limits; removing it.
 */
export function PlayerSettingsPage({ deviceId }: { deviceId: string }) {
  const name = useSignal<string | undefined>(undefined);
  const newName = useSignal('');
  const settings = useSignal<Settings | undefined>(undefined);
  const status = useSignal<DeviceStatus | undefined>(undefined);
  const title = useSignal<string | undefined>(undefined);
  const gone = useSignal(false);
  const loadError = useSignal<string | undefined>(undefined);
  const path = { params: { path: { deviceId } } };

  const loadConfig = async (): Promise<void> => {
    const { data, error, response } = await api.GET('/device-v2/{deviceId}/config', path);
    if (!data) {
      if (response.status === 404) gone.value = true;
      else loadError.value = errorMessage(error, response);
      return;
    }
    const config = data.device.config as unknown as Settings;
    name.value = data.device.name;
    newName.value = data.device.name;
    settings.value = Object.fromEntries(SETTINGS.map((s) => [s, String(config[s])])) as Settings;
  };
  const loadStatus = async (): Promise<void> => {
    const { data } = await api.GET('/device-v2/{deviceId}/status', path);
    if (!data) return;
    status.value = data;
    const cardId = data.activeCard;
    if (cardId && cardId !== 'none') {
      const card = await api.GET('/card/{cardId}', { params: { path: { cardId } } });
      title.value = card.data?.card.title;
    }
  };
  useEffect(() => {
    void loadConfig();
    void loadStatus();
  }, [deviceId]);
  // Its reports, its removal, and a rename elsewhere; missed events (reset): everything again.
  useLiveReads(['player.', 'family.changed'], (event) => {
    if (event?.kind === 'player.removed' && event.ids.deviceId === deviceId) gone.value = true;
    else if (!event || (event.kind !== 'family.changed' && event.ids.deviceId === deviceId)) void loadStatus();
  });

  const rename = useActions(loadConfig);
  const save = useActions(loadConfig);
  const remove = useActions(async () => undefined);

  if (gone.value) {
    return (
      <Page title={t.gone}>
        <p>
          <Link to="/family">{t.back}</Link>
        </p>
      </Page>
    );
  }
  if (!name.value || !settings.value) {
    return (
      <Page title={messages.common.loading}>
        <ErrorText message={loadError.value} />
      </Page>
    );
  }
  const s = status.value;
  const online = Boolean(s?.isOnline);
  const playing = s && s.activeCard !== 'none' ? (title.value ?? '…') : undefined;
  const now = !playing ? t.nothing : s?.playbackStatus === 'playing' ? t.playing(playing) : t.paused(playing);
  const lastSeen = s?.reportedAt ? t.lastSeen(formatTime(s.reportedAt)) : t.never;
  const field = (setting: Setting, type: 'time' | 'number') => (
    <>
      <label for={`setting-${setting}`}>{t[setting]}</label>
      <input
        id={`setting-${setting}`}
        type={type}
        required
        {...(type === 'number' ? { min: LIMIT.min, max: LIMIT.max, step: 1, inputMode: 'numeric' as const } : {})}
        value={settings.value![setting]}
        onInput={(e) => (settings.value = { ...settings.value!, [setting]: e.currentTarget.value })}
      />
    </>
  );
  return (
    <Page title={t.title(name.value)}>
      <div class="family">
        <p>
          <Link to="/family">{t.back}</Link>
        </p>
        <h2>{t.status}</h2>
        <dl class="player-now" data-testid="player-now">
          <dt>{online ? t.online : t.offline}</dt>
          <dd>{lastSeen}</dd>
          <dt>{now}</dt>
          {s && <dd>{t.volume(s.userVolumePercentage)}</dd>}
        </dl>

        <h2>{t.nameTitle}</h2>
        <form
          class="settings-form"
          onSubmit={(e) => {
            e.preventDefault();
            const to = newName.value.trim();
            void rename.act(api.PATCH('/device-v2/{deviceId}/config', { ...path, body: { name: to } }), t.renamed(to));
          }}
        >
          <label for="player-name">{t.name}</label>
          <input id="player-name" required minLength={1} maxLength={64} value={newName.value} onInput={(e) => (newName.value = e.currentTarget.value)} />
          <div class="toolbar">
            <button type="submit">{messages.common.rename}</button>
          </div>
          <ErrorText message={rename.error.value} />
          <Status>{rename.status.value}</Status>
        </form>

        <h2>{t.settings}</h2>
        <form
          class="settings-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save.act(api.PATCH('/device-v2/{deviceId}/config', { ...path, body: { config: { ...settings.value! } } }), t.savedSettings);
          }}
        >
          <p class="muted">{t.settingsIntro}</p>
          {field('dayTime', 'time')}
          {field('maxVolumeLimit', 'number')}
          {field('nightTime', 'time')}
          {field('nightMaxVolumeLimit', 'number')}
          <div class="toolbar">
            <button type="submit">{t.saveSettings}</button>
          </div>
          <ErrorText message={save.error.value} />
          <Status>{save.status.value}</Status>
        </form>

        <ErrorText message={remove.error.value} />
        <ConfirmButton
          label={t.remove(name.value)}
          question={t.confirmRemove(name.value)}
          yes={t.yesRemove}
          onConfirm={async () => {
            if (await remove.act(api.DELETE('/device-v2/{deviceId}', path), '')) navigate('/family');
          }}
        />
      </div>
    </Page>
  );
}
