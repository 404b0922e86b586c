import { useViewStore } from '../../state/view/view-store.ts';

const NEXT = { system: 'light', light: 'dark', dark: 'system' } as const;
const LABEL = { system: '◐ system', light: '☀ light', dark: '☾ dark' } as const;

/** Cycles system → light → dark; "system" follows prefers-color-scheme. */
export function ThemeSwitch() {
  const theme = useViewStore((v) => v.theme);
  const set = useViewStore((v) => v.set);
  return (
    <button
      type="button"
      onClick={() => set({ theme: NEXT[theme] })}
      title="theme: follows the system, or light, or dark"
      data-testid="theme-switch"
      data-theme={theme}
    >
      {LABEL[theme]}
    </button>
  );
}
