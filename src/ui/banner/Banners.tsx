import { useMemo, useState } from 'react';
import { sessionBanners, type Banner, type BannerPart } from '../../core/capture/banners.ts';
import type { FileReport } from '../../core/capture/ingest.ts';
import { useLoadStore, type LoadState } from '../../state/load/load-store.ts';
import { fmtInt } from '../common/format.ts';
import './banners.css';

/** the file reports of a load that understood nothing, which kept the capture shown (read so as not to depend on the store's version) */
const rejectedOf = (s: LoadState) => (s as LoadState & { rejected?: FileReport[] | null }).rejected ?? null;

const keyOf = (b: Banner) => `${b.id}\u0000${b.rejected}\u0000${b.files.join('\u0000')}`;

/**
 * What the capture lacks or cannot use, one message per problem, at the top of the page: the
 * words come from the core (`sessionBanners`), so the command line can say the same. Each can
 * be dismissed; a new capture or a new rejected load brings its own back.
 */
export function Banners() {
  const summary = useLoadStore((s) => s.summary);
  const rejected = useLoadStore(rejectedOf);
  const banners = useMemo(() => sessionBanners(summary, rejected), [summary, rejected]);
  // dismissals hold for the summary and rejected files they were made on
  const scope = useMemo(() => ({}), [summary, rejected]);
  const [dismissed, setDismissed] = useState<{ scope: object; keys: ReadonlySet<string> }>({ scope, keys: new Set() });
  const gone = dismissed.scope === scope ? dismissed.keys : new Set<string>();
  // each banner folded to one line until opened (its whole text is there for search and screen readers)
  const [opened, setOpened] = useState<{ scope: object; keys: ReadonlySet<string> }>({ scope, keys: new Set() });
  const open = opened.scope === scope ? opened.keys : new Set<string>();
  const toggle = (b: Banner) => {
    const next = new Set(open);
    if (!next.delete(keyOf(b))) next.add(keyOf(b));
    setOpened({ scope, keys: next });
  };
  const shown = banners.filter((b) => !gone.has(keyOf(b)));
  if (shown.length === 0) return null;
  const dismiss = (b: Banner) => setDismissed({ scope, keys: new Set([...gone, keyOf(b)]) });
  return (
    <section className="banners" aria-label="what is missing or unusable">
      {shown.map((b, i) => (
        <div
          key={keyOf(b)}
          className={`banner banner-${b.level}`}
          role={b.level === 'error' ? 'alert' : 'status'}
          data-testid="banner"
          data-banner={b.id}
          data-files={b.files.join('\n')}
          data-rejected={b.rejected ? 'true' : 'false'}
        >
          <span className="banner-mark" aria-hidden="true">
            {b.level === 'error' ? '!' : 'i'}
          </span>
          <p className={open.has(keyOf(b)) ? 'banner-text' : 'banner-text folded'} id={`banner-text-${i}`}>
            <strong className="banner-title">{b.title}.</strong> <Parts parts={b.body} />
          </p>
          <button
            type="button"
            className="banner-more"
            data-testid="banner-more"
            aria-expanded={open.has(keyOf(b))}
            aria-controls={`banner-text-${i}`}
            onClick={() => toggle(b)}
          >
            {open.has(keyOf(b)) ? 'less' : 'more'}
          </button>
          <button
            type="button"
            className="banner-dismiss"
            data-testid="banner-dismiss"
            aria-label={`Dismiss: ${b.title}`}
            title="Dismiss"
            onClick={() => dismiss(b)}
          >
            ×
          </button>
        </div>
      ))}
    </section>
  );
}

function Parts({ parts }: { parts: readonly BannerPart[] }) {
  return (
    <>
      {parts.map((p, i) =>
        typeof p === 'string' ? (
          p
        ) : 'num' in p ? (
          <span key={i} className="banner-num">
            {fmtInt(p.num)}
          </span>
        ) : 'code' in p ? (
          <code key={i}>{p.code}</code>
        ) : (
          <span key={i} className="banner-file">
            {p.file}
          </span>
        ),
      )}
    </>
  );
}
