import { create } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { Selection } from '../../core/query/api.ts';
import type { DumpSlotRef } from '../../core/query/api.ts';
import { DEFAULT_VIEW, formatView, parseView, parseViewReport, type Dropped, type UrlView } from './view-url.ts';

export interface ViewState extends UrlView {
  /**
   * The selected stack as this capture's index, what the queries take. The URL holds its
   * `selectedStackHash` instead: with a stack and no hash yet, the hash is being asked for (and the
   * URL waits for it); with a hash and no stack, the stack is being looked up in the capture.
   */
  stack: number | null;
  /** the dump slots holding the selected stack (generation and slot: its stack_id); null while not known */
  selectedStackSlots: DumpSlotRef[] | null;
  /** what the link (or Back into another capture's view) carried that this capture lacks: dropped, shown as one line */
  notice: Dropped[] | null;
  /** bumps each time the view is taken from the URL (Back, Forward), so the capture sync fits it */
  urlEpoch: number;
  /** the keyboard help is open */
  help: boolean;
  /** which of a simulated capture's wrong or detected ids has its story shown (ui/idstory), null for none */
  idStory: number | null;
  /** where the event filter typed last is wrong (its column, 1-based), null when it applied; not in the URL */
  eventFilterError: { text: string; line: number; column: number; message: string } | null;
  /** one event singled out on the timeline (Show on the timeline from an id's story); not in the URL */
  pin: { ts: number; cpu: number } | null;
  set(patch: Partial<ViewState>): void;
  /** a stack selected in one pane is shown in every pane; selecting it again clears it */
  selectStack(stack: number | null): void;
  /** back to the defaults (a new capture); the theme stays */
  reset(): void;
  dismissNotice(): void;
}

/**
 * This capture's stack index <-> stack_hash (and dump slots), as far as known: from top-stack rows
 * and the worker's answers (queries.ts). Cleared when another capture opens, since its indices
 * mean other stacks.
 */
export const stackIds = {
  hash: new Map<number, string>(),
  stack: new Map<string, number>(),
  slots: new Map<number, DumpSlotRef[]>(),
  remember(stack: number, hash: string, slots?: DumpSlotRef[]) {
    this.hash.set(stack, hash);
    this.stack.set(hash, stack);
    if (slots) this.slots.set(stack, slots);
  },
  clear() {
    this.hash.clear();
    this.stack.clear();
    this.slots.clear();
  },
};

/** A patch that sets `stack` gets the hash and slots that go with it, where known (else the sync asks). */
function withStackIdentity(patch: Partial<ViewState>): Partial<ViewState> {
  if (!('stack' in patch) || 'selectedStackHash' in patch) return patch;
  const s = patch.stack ?? null;
  return {
    ...patch,
    stack: s,
    selectedStackHash: s === null ? null : (stackIds.hash.get(s) ?? null),
    selectedStackSlots: s === null ? null : (stackIds.slots.get(s) ?? null),
  };
}

/** The store's part of a query string: the view, and the stack where this capture's index is already known. */
function fromUrl(search: string): Pick<ViewState, keyof UrlView | 'stack' | 'selectedStackSlots' | 'notice'> {
  const { view, dropped } = parseViewReport(search);
  const stack = view.selectedStackHash === null ? null : (stackIds.stack.get(view.selectedStackHash) ?? null);
  return { ...view, stack, selectedStackSlots: stack === null ? null : (stackIds.slots.get(stack) ?? null), notice: dropped.length ? dropped : null };
}

const inBrowser = typeof window !== 'undefined' && typeof location !== 'undefined';

// restored from the URL before the first query is asked; the stack is found by its hash once a capture is open
const initial = inBrowser ? fromUrl(location.search) : { ...DEFAULT_VIEW, stack: null, selectedStackSlots: null, notice: null };

/** the next URL write replaces the history entry even if it changes what Back would undo */
let replaceNext = false;

export const useViewStore = create<ViewState>((set, get) => ({
  ...initial,
  urlEpoch: 0,
  help: false,
  idStory: null,
  pin: null,
  eventFilterError: null,
  set: (patch) => set(withStackIdentity(patch)),
  selectStack: (stack) => set(withStackIdentity({ stack: get().stack === stack ? null : stack })),
  // the theme and an explicit frames choice are the user's preferences, not the capture's view
  reset: () =>
    setQuietly({
      ...DEFAULT_VIEW,
      stack: null,
      selectedStackSlots: null,
      notice: null,
      theme: get().theme,
      flameFrames: get().flameFrames,
      help: false,
      idStory: null,
      pin: null,
      eventFilterError: null,
    }),
  dismissNotice: () => set({ notice: null }),
}));

/**
 * A change the user did not make (the view fitted to a capture, a new capture's defaults, Back
 * restoring an entry): written to the URL with replaceState, never as a new history entry.
 */
export function setQuietly(patch: Partial<ViewState>): void {
  replaceNext = true;
  try {
    useViewStore.setState(patch);
  } finally {
    replaceNext = false;
  }
}

/** What Back undoes: the stack selection, the selection every pane is filtered by (range, generation, CPUs), and the flame graph's transforms. */
const UNDOABLE = ['selectedStackHash', 'range', 'generation', 'cpus', 'flameTransforms', 'eventFilter'] as const;
const differs = (a: UrlView, b: UrlView) => UNDOABLE.some((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));

if (inBrowser) {
  // an old link's unreadable stack leaves the address bar at once (the notice says so)
  const start = formatView(useViewStore.getState(), location.search);
  if (start !== location.search) history.replaceState(history.state, '', `${location.pathname}${start}${location.hash}`);

  // pushState for what a user would undo with Back, replaceState for the rest (every pan, every
  // keystroke of a filter). A replacement is written once the view has stood still for REPLACE_MS:
  // a wheel zoom or a held key is one write when the gesture ends, not one per frame (Chromium
  // also drops history writes beyond a few hundred in ten seconds, and the URL then stays behind).
  const REPLACE_MS = 150;
  let pending: ReturnType<typeof setTimeout> | null = null;
  const cancelPending = () => {
    if (pending !== null) clearTimeout(pending);
    pending = null;
  };
  const write = () => {
    cancelPending();
    const v = useViewStore.getState();
    if (v.stack !== null && v.selectedStackHash === null) return;
    const next = formatView(v, location.search);
    if (next === location.search) return;
    history.replaceState(history.state, '', `${location.pathname}${next}${location.hash}`);
  };
  useViewStore.subscribe((v) => {
    // a stack chosen by index: the URL waits for its hash
    if (v.stack !== null && v.selectedStackHash === null) return;
    if (!replaceNext && differs(parseView(location.search), v)) {
      const next = formatView(v, location.search);
      cancelPending();
      if (next !== location.search) history.pushState(null, '', `${location.pathname}${next}${location.hash}`);
      return;
    }
    // the gesture goes on: the write waits for it to end
    cancelPending();
    pending = setTimeout(write, REPLACE_MS);
  });

  // Back and Forward: the entry's view, which the capture sync (queries.ts) then fits to the capture open now
  window.addEventListener('popstate', () => {
    // a replacement still waiting belongs to the entry just left
    cancelPending();
    setQuietly({ ...fromUrl(location.search), urlEpoch: useViewStore.getState().urlEpoch + 1 });
  });
}

/** The selection every pane is filtered by (a stable object while its parts do not change). */
export function useSelection(): Selection {
  return useViewStore(useShallow((v) => ({ range: v.range, generation: v.generation, cpus: v.cpus })));
}

export const isFiltered = (s: Selection) => s.range !== null || s.generation !== null || s.cpus !== null;
