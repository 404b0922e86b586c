import { useLoadStore } from './load-store.ts';
import type { SimPane } from './sim-settings.ts';
import type { useSimStore } from './sim-store.ts';

/** Which pane shows (explorer or simulator), kept in the URL as ?view=simulator. */

const inBrowser = typeof window !== 'undefined' && typeof location !== 'undefined';

/** The pane the page opens on, read from the URL when the store is created. */
export const initialPane: SimPane = inBrowser && new URLSearchParams(location.search).get('view') === 'simulator' ? 'simulator' : 'explorer';

/** In a browser: writes the store's pane to the URL, and shows the explorer when files are opened. */
export function syncPane(store: typeof useSimStore): void {
  if (!inBrowser) return;
  // the pane lives in the URL as ?view=simulator (the view store leaves keys it does not own alone)
  const sync = () => {
    const q = new URLSearchParams(location.search);
    const want = store.getState().pane === 'simulator';
    if (want === (q.get('view') === 'simulator')) return;
    if (want) q.set('view', 'simulator');
    else q.delete('view');
    const qs = q.toString();
    history.replaceState(history.state, '', `${location.pathname}${qs ? `?${qs}` : ''}${location.hash}`);
  };
  store.subscribe((s, prev) => s.pane !== prev.pane && sync());
  // files opened or dropped while the simulator shows: show them (the first, automatic sample load does not)
  useLoadStore.subscribe((l, prev) => {
    if (l.status === 'loading' && prev.status !== 'loading' && (l.source === 'files' || l.captureId > 0)) store.getState().setPane('explorer');
  });
}
