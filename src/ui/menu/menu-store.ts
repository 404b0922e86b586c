import { create } from 'zustand';

/** One entry of a context menu: what it says, and what it does when chosen. */
export interface MenuItem {
  id: string;
  label: string;
  /** a longer description, as the item's title */
  hint?: string;
  /** shown after the label, quieter (the text that will be copied) */
  detail?: string;
  disabled?: boolean;
  run(): void | Promise<void>;
}

export interface MenuState {
  open: { x: number; y: number; title: string; items: MenuItem[]; stack: number | null } | null;
  /** a short confirmation ("Copied frame"), or an error */
  toast: { text: string; error: boolean; seq: number } | null;
  /** a stack to show in the timeline: its occurrences are asked for, then the timeline zooms to them */
  reveal: { stack: number; seq: number } | null;
  show(x: number, y: number, title: string, items: MenuItem[], stack?: number | null): void;
  close(): void;
  say(text: string, error?: boolean): void;
  revealStack(stack: number): void;
  revealed(): void;
}

let seq = 0;

/** The one context menu of the page (and its toast): the panes fill it, ContextMenu draws it. */
export const useMenuStore = create<MenuState>((set) => ({
  open: null,
  toast: null,
  reveal: null,
  show: (x, y, title, items, stack = null) => set({ open: { x, y, title, items, stack } }),
  close: () => set({ open: null }),
  say: (text, error = false) => set({ toast: { text, error, seq: ++seq } }),
  revealStack: (stack) => set({ reveal: { stack, seq: ++seq } }),
  revealed: () => set({ reveal: null }),
}));

/** Puts text on the clipboard and says so (or says why not). */
export async function copyText(text: string, what: string): Promise<void> {
  const say = useMenuStore.getState().say;
  try {
    await navigator.clipboard.writeText(text);
    say(`Copied ${what}`);
  } catch (e) {
    say(`Could not copy ${what}: ${(e as Error).message || 'the clipboard refused'}`, true);
  }
}
