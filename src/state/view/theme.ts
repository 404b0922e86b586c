import { useSyncExternalStore } from 'react';
import { useViewStore } from './view-store.ts';

const query = () => window.matchMedia('(prefers-color-scheme: dark)');
const subscribe = (cb: () => void) => {
  const m = query();
  m.addEventListener('change', cb);
  return () => m.removeEventListener('change', cb);
};

/** 'light' or 'dark': the user's choice, else the system's. */
export function useResolvedTheme(): 'light' | 'dark' {
  const choice = useViewStore((v) => v.theme);
  const systemDark = useSyncExternalStore(
    subscribe,
    () => query().matches,
    () => false,
  );
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice;
}

/** The theme on <html> (CSS variables follow it), set from the store's choice and the system's. */
function applyTheme(): void {
  const choice = useViewStore.getState().theme;
  const theme = choice === 'system' ? (query().matches ? 'dark' : 'light') : choice;
  document.documentElement.dataset.theme = theme;
  document.documentElement.style.colorScheme = theme;
}

// Set the moment the choice changes, before React renders for it: canvases redraw in their layout
// effects, which run before any effect of the App that holds them, so a theme put on <html> by an
// effect came too late and every canvas kept the old colours until its next redraw.
if (typeof window !== 'undefined' && typeof document !== 'undefined') {
  applyTheme();
  useViewStore.subscribe((s, prev) => s.theme !== prev.theme && applyTheme());
  query().addEventListener('change', applyTheme);
}

/** The resolved theme (on <html> already, see applyTheme). */
export function useApplyTheme(): 'light' | 'dark' {
  return useResolvedTheme();
}
