import { useLoadStore } from '../load/load-store.ts';
import { DEFAULT_SETTINGS, maxSimCpus, type SimPane, type SimSettings } from './sim-settings.ts';
import { formatSimSettings, ignoredNotice, parseSimSettingsNoted } from './sim-url.ts';

/** Which pane shows (explorer or simulator), kept in the URL as ?view=simulator, and the simulator's settings (`sim.*`, sim-url.ts). */

/** The pane a query string names. */
export const paneOf = (search: string): SimPane => (new URLSearchParams(search).get('view') === 'simulator' ? 'simulator' : 'explorer');

const inBrowser = typeof window !== 'undefined' && typeof location !== 'undefined';

/** The pane the page opens on, read from the URL when the store is created. */
export const initialPane: SimPane = inBrowser ? paneOf(location.search) : 'explorer';

const fromUrl = inBrowser ? parseSimSettingsNoted(location.search, maxSimCpus()) : null;

/** The settings the page opens with: the defaults, with the URL's valid `sim.*` values over them. */
export const initialSettings: SimSettings = fromUrl ? { ...DEFAULT_SETTINGS, ...fromUrl.settings } : DEFAULT_SETTINGS;

/** What the pane says first when the URL gave `sim.*` values it did not take (null: nothing to say). */
export const initialNotice: string | null = fromUrl ? ignoredNotice(fromUrl.ignored) : null;

const replaceQuery = (q: string) => history.replaceState(history.state, '', `${location.pathname}${q}${location.hash}`);
const pushQuery = (q: string) => history.pushState(null, '', `${location.pathname}${q}${location.hash}`);

/** What syncPane reads of the simulator's store, and asks of it. */
export interface PaneStore {
  getState(): { pane: SimPane; settings: SimSettings; setPane(p: SimPane): void };
  subscribe(listener: (s: { pane: SimPane; settings: SimSettings }, prev: { pane: SimPane; settings: SimSettings }) => void): () => void;
}

/** In a browser: writes the store's pane and settings to the URL, and shows the explorer when files are opened. */
export function syncPane(store: PaneStore): void {
  if (!inBrowser) return;
  // the pane lives in the URL as ?view=simulator (the view store leaves keys it does not own alone).
  // A switch is a history entry of its own, as a page of its own would be: Back leaves the
  // simulator for the explorer as it was (its generation, range and stack kept in the entry), and
  // Forward returns. A switch made by Back or Forward writes nothing.
  let fromHistory = false;
  const sync = () => {
    const q = new URLSearchParams(location.search);
    const want = store.getState().pane === 'simulator';
    if (want === (q.get('view') === 'simulator') || fromHistory) return;
    if (want) q.set('view', 'simulator');
    else q.delete('view');
    const qs = q.toString();
    pushQuery(qs ? `?${qs}` : '');
  };
  store.subscribe((s, prev) => s.pane !== prev.pane && sync());
  window.addEventListener('popstate', () => {
    const pane = paneOf(location.search);
    if (store.getState().pane === pane) return;
    fromHistory = true;
    try {
      store.getState().setPane(pane);
    } finally {
      fromHistory = false;
    }
  });
  // the settings, as the explorer's view: replaceState on every change, defaults left out
  const syncSettings = () => {
    const next = formatSimSettings(store.getState().settings, location.search);
    if (next !== location.search) replaceQuery(next);
  };
  store.subscribe((s, prev) => s.settings !== prev.settings && syncSettings());
  // files opened or dropped while the simulator shows: show them (the first, automatic sample load does not)
  useLoadStore.subscribe((l, prev) => {
    if (l.status === 'loading' && prev.status !== 'loading' && (l.source === 'files' || l.captureId > 0)) store.getState().setPane('explorer');
  });
}
