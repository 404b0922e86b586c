import { useEffect, useRef } from 'react';
import { useLoadStore } from '../../state/load/load-store.ts';
import { fmtInt } from '../common/format.ts';

/**
 * Files picked (or dropped outside the two targets) while a capture of the user's is open:
 * add them to it, or open them as a new capture. The default, focused so Enter takes it, is
 * Add when the files bring a part the capture lacks (a trace, then its dumps), else Replace.
 */
export function AddOrReplace() {
  const offer = useLoadStore((s) => s.offer);
  const files = useLoadStore((s) => s.files);
  const answer = useLoadStore((s) => s.answerOffer);
  const add = useRef<HTMLButtonElement>(null);
  const replace = useRef<HTMLButtonElement>(null);
  const suggested = offer?.suggested ?? null;
  useEffect(() => {
    if (suggested === 'add') add.current?.focus();
    else if (suggested === 'replace') replace.current?.focus();
  }, [suggested, offer]);
  if (!offer) return null;
  const names = offer.files.map((f) => f.name);
  const shown = names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${fmtInt(names.length - 4)} more` : names.join(', ');
  return (
    <div className="modal-backdrop" onClick={() => answer(null)}>
      <div
        className="modal add-or-replace"
        role="dialog"
        aria-modal="true"
        aria-label="add the files or open them as a new capture"
        data-testid="add-or-replace"
        data-suggested={suggested ?? undefined}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          // keys here are the dialog's, not the timeline's or the help's
          e.stopPropagation();
          if (e.key === 'Escape') answer(null);
        }}
      >
        <h2>
          {fmtInt(names.length)} file{names.length === 1 ? '' : 's'}: {shown}
        </h2>
        <p className="quiet">
          A capture is open ({fmtInt(files.length)} file{files.length === 1 ? '' : 's'}: {files.slice(0, 4).join(', ')}
          {files.length > 4 ? ', …' : ''}).{' '}
          {suggested === 'add'
            ? 'These bring a part it lacks, so adding them is suggested.'
            : suggested === 'replace'
              ? 'It already has the parts these bring, so opening them on their own is suggested.'
              : 'Looking at the files…'}
        </p>
        <div className="choices">
          <button ref={add} type="button" data-testid="add-files" data-default={suggested === 'add' || undefined} onClick={() => answer('add')}>
            <b>Add to this capture</b>
            <span>read only these; every number then counts all the files</span>
          </button>
          <button ref={replace} type="button" data-testid="replace-files" data-default={suggested === 'replace' || undefined} onClick={() => answer('replace')}>
            <b>Open as a new capture</b>
            <span>these files on their own, in place of this capture</span>
          </button>
        </div>
        <div className="dismiss">
          <button type="button" className="link" onClick={() => answer(null)}>
            Cancel (Esc)
          </button>
        </div>
      </div>
    </div>
  );
}
