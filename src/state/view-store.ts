import { create } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { Selection } from '../core/model/query-types.ts';
import { DEFAULT_VIEW, formatView, parseView, type UrlView } from './view-url.ts';

export interface ViewState extends UrlView {
  /** the keyboard help is open */
  help: boolean;
  set(patch: Partial<ViewState>): void;
  /** a stack selected in one pane is shown in every pane; selecting it again clears it */
  selectStack(stack: number | null): void;
  /** back to the defaults (a new capture); the theme stays */
  reset(): void;
}

const inBrowser = typeof window !== 'undefined' && typeof location !== 'undefined';

// restored from the URL before the first query is asked
const initial: UrlView = inBrowser ? parseView(location.search) : DEFAULT_VIEW;

export const useViewStore = create<ViewState>((set, get) => ({
  ...initial,
  help: false,
  set: (patch) => set(patch),
  selectStack: (stack) => set({ stack: get().stack === stack ? null : stack }),
  reset: () => set({ ...DEFAULT_VIEW, theme: get().theme, help: false }),
}));

if (inBrowser) {
  // replaceState, not pushState: the back button leaves the page rather than stepping through zooms
  useViewStore.subscribe((v) => {
    const next = formatView(v, location.search);
    if (next === location.search) return;
    history.replaceState(history.state, '', `${location.pathname}${next}${location.hash}`);
  });
}

/** The selection every pane is filtered by (a stable object while its parts do not change). */
export function useSelection(): Selection {
  return useViewStore(useShallow((v) => ({ range: v.range, generation: v.generation, cpus: v.cpus })));
}

export const isFiltered = (s: Selection) => s.range !== null || s.generation !== null || s.cpus !== null;
