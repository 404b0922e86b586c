import { useEffect, useSyncExternalStore } from 'react';
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
  const systemDark = useSyncExternalStore(subscribe, () => query().matches, () => false);
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice;
}

/** Puts the resolved theme on <html> (CSS variables follow it) and returns it. */
export function useApplyTheme(): 'light' | 'dark' {
  const theme = useResolvedTheme();
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    document.documentElement.style.colorScheme = theme;
  }, [theme]);
  return theme;
}
