import { useState } from 'react';
import { useStackFrames, useWorkerQuery } from '../../state/view/queries.ts';
import { useViewStore } from '../../state/view/view-store.ts';
import { fmtInt } from '../common/format.ts';
import { focusFunction, functionOf, stackMenu } from '../menu/actions.ts';
import { copyText, useMenuStore } from '../menu/menu-store.ts';
import { useContextMenu } from '../menu/useContextMenu.ts';

/**
 * The selected stack's frames, leaf first, copyable; a frame opens the sandwich view on its
 * function, and has the context menu of a frame (right-click, long-press).
 */
export function StackFrames({ stack, hash: known = null }: { stack: number; hash?: string | null }) {
  const { data } = useStackFrames(stack);
  // its stack_hash ("filter to this stack"): from its row when the table shows it, else asked
  const asked = useWorkerQuery<string>(known ? null : `stack-hash|${stack}`, (api) => api.stackHash(stack)).data;
  const hash = known ?? asked;
  const selectStack = useViewStore((v) => v.selectStack);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await copyText((data ?? []).join('\n'), 'stack');
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="frames" data-testid="stack-frames" data-stack={stack}>
      <div className="frames-head">
        <b>Selected stack</b>
        {hash && (
          <span className="quiet mono" title="stack_hash: the stack's identity in every capture">
            {hash}
          </span>
        )}
        <span className="quiet">{data ? `${fmtInt(data.length)} frames, leaf first` : '…'}</span>
        <button type="button" onClick={() => void copy()} disabled={!data} data-testid="copy-frames">
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={() => selectStack(null)} aria-label="close stack">
          ×
        </button>
      </div>
      <ol className="frame-list mono">
        {data?.map((f, i) => (
          <Frame key={i} frame={f} stack={stack} hash={hash} frames={data} />
        ))}
      </ol>
    </div>
  );
}

function Frame({ frame, stack, hash, frames }: { frame: string; stack: number; hash: string | null; frames: string[] }) {
  const menu = useContextMenu<HTMLButtonElement>((x, y) => useMenuStore.getState().show(x, y, frame, stackMenu({ stack, hash, frame, frames }), stack));
  return (
    <li data-testid="stack-frame">
      <button
        type="button"
        className="link"
        title="sandwich: callers and callees of this function (right-click: more)"
        onClick={() => focusFunction(functionOf(frame))}
        {...menu}
      >
        {frame}
      </button>
    </li>
  );
}
