import { useState } from 'react';
import { useStackFrames } from '../../state/queries.ts';
import { useViewStore } from '../../state/view-store.ts';

/** The selected stack's frames, leaf first, copyable; a frame opens the sandwich view on its function. */
export function StackFrames({ stack }: { stack: number }) {
  const { data } = useStackFrames(stack);
  const set = useViewStore((v) => v.set);
  const selectStack = useViewStore((v) => v.selectStack);
  const [copied, setCopied] = useState(false);
  const text = data?.join('\n') ?? '';
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div className="frames" data-testid="stack-frames" data-stack={stack}>
      <div className="frames-head">
        <b>stack {stack}</b>
        <span className="quiet">{data ? `${data.length} frames, leaf first` : '…'}</span>
        <button type="button" onClick={() => void copy()} disabled={!data} data-testid="copy-frames">
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={() => selectStack(null)} aria-label="close stack">
          ×
        </button>
      </div>
      <ol className="frame-list mono">
        {data?.map((f, i) => (
          <li key={i}>
            <button
              type="button"
              className="link"
              title="sandwich: callers and callees of this function"
              onClick={() => set({ flameMode: 'sandwich', flameFocus: f.replace(/\+0x[0-9a-f]+$/i, ''), flameZoom: [] })}
            >
              {f}
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}
