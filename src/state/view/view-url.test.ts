import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, fitView, formatView, parseView, parseViewReport, shapeOf, type CaptureShape, type UrlView } from './view-url.ts';
import { openAsBlob } from 'node:fs';
import { Explorer } from '../../core/query/explorer.ts';
import { loadFiles } from '../../core/capture/load.ts';
import { sampleCapture } from '../../core/testing/explorer-fixtures.ts';
import { realIt, realTracePath } from '../../core/testing/real-traces.ts';

// FNV-1a 64 of "a", a published test vector: any 16 lowercase hex digits will do here
const HASH = 'af63dc4c8601ec8c';

describe('view <-> query string', () => {
  it('leaves the defaults out', () => {
    expect(formatView(DEFAULT_VIEW)).toBe('');
    expect(parseView('')).toEqual(DEFAULT_VIEW);
  });

  it('round-trips every part of a view', () => {
    const v: UrlView = {
      ...DEFAULT_VIEW,
      range: [5123.000848, 5123.5],
      window: [5123.1, 5123.9],
      generation: 3,
      cpus: [0, 2],
      selectedStackHash: HASH,
      flameMode: 'sandwich',
      flameWeight: 'refcount',
      flameFocus: '__kmalloc',
      flameZoom: ['all', 'do_syscall_64'],
      flameSearch: '/wake_up/',
      filter: 'kmalloc',
      lanes: 'task',
      theme: 'dark',
      diff: [4, 'none'],
    };
    expect(parseView(formatView(v))).toEqual(v);
    expect(new URLSearchParams(formatView(v)).get('stack')).toBe(HASH);
    // the question users bring: a field weight, groups, transforms and several event filters
    const w: UrlView = {
      ...v,
      flameWeight: 'field:bytes_alloc',
      flameGroup: 'task',
      flameTransforms: [
        { kind: 'drop', pattern: 'entry_SYSCALL_64' },
        { kind: 'focus', fn: '__kmalloc' },
        { kind: 'merge', fn: 'kmalloc_trace' },
        { kind: 'rec', fn: 'ep_poll' },
      ],
      eventFilter: 'kmem_cache_alloc: bytes_alloc > 512 && common_pid == 1403\nsched_wakeup: comm =~ "binder.*"',
    };
    expect(parseView(formatView(w))).toEqual(w);
  });

  it('several event filters are a filter= each, read back a line each; blank ones dropped', () => {
    const q = new URLSearchParams(formatView({ ...DEFAULT_VIEW, eventFilter: ' a: x == 1 \n\nb: y > 2' }));
    expect(q.getAll('filter')).toEqual(['a: x == 1', 'b: y > 2']);
    expect(parseView('?filter=a%3A+x+%3D%3D+1&filter=&filter=b%3A+y+%3E+2').eventFilter).toBe('a: x == 1\nb: y > 2');
  });

  it('keeps keys it does not own and ignores nonsense', () => {
    expect(formatView({ ...DEFAULT_VIEW, generation: 2 }, '?view=simulator&gen=1')).toBe('?view=simulator&gen=2');
    const v = parseView('?range=3,1&gen=x&cpus=a&stack=-4&flame=sideways&lanes=gpu&theme=pink');
    expect(v).toEqual(DEFAULT_VIEW);
    expect(parseView('?gen=none').generation).toBe('none');
  });

  it('names the stack by stack_hash only: an old numeric link is reported, not read as a stack', () => {
    expect(parseViewReport(`?stack=${HASH}`)).toEqual({ view: { ...DEFAULT_VIEW, selectedStackHash: HASH }, dropped: [] });
    expect(parseView(`?stack=${HASH.toUpperCase()}`).selectedStackHash).toBe(HASH);
    expect(parseViewReport('?stack=40&gen=2')).toEqual({
      view: { ...DEFAULT_VIEW, generation: 2 },
      dropped: [{ what: 'stack-index', value: '40', index: true }],
    });
    for (const bad of ['af63dc4c8601ec8', 'af63dc4c8601ec8cc', 'zf63dc4c8601ec8c', '']) {
      const r = parseViewReport(`?stack=${bad}`);
      expect(r.view.selectedStackHash).toBeNull();
      expect(r.dropped).toEqual([{ what: 'stack-index', value: bad, index: false }]);
    }
    // whatever a link holds, the notice gets a short value
    expect((parseViewReport(`?stack=${'9'.repeat(5000)}`).dropped[0] as { value: string }).value.length).toBe(24);
    // serialized without the stale value
    expect(formatView(parseView('?stack=40&gen=2'), '?stack=40&gen=2')).toBe('?gen=2');
  });
});

describe('a view fitted to the capture', () => {
  const shape: CaptureShape = { t0: 100, t1: 200, cpus: [0, 1, 3], generations: [1, 2, 'none'] };
  const view = (patch: Partial<UrlView>): UrlView => ({ ...DEFAULT_VIEW, selectedStackHash: HASH, filter: 'kmalloc', ...patch });

  it('keeps what fits, untouched', () => {
    const v = view({ generation: 2, cpus: [3, 0], range: [150, 160], window: [90, 110], diff: [1, 'none'] });
    expect(fitView(v, shape)).toEqual({ view: v, dropped: [] });
    // touching the span is inside it
    expect(fitView(view({ range: [200, 300] }), shape).dropped).toEqual([]);
  });

  it('drops a generation, CPUs, a range, a window and a diff the capture lacks; the rest stays', () => {
    const v = view({ generation: 7, cpus: [0, 5, 6], range: [300, 400], window: [1, 2], diff: [2, 9] });
    const { view: out, dropped } = fitView(v, shape);
    expect(dropped).toEqual([
      { what: 'generation', generation: 7 },
      { what: 'cpus', cpus: [5, 6] },
      { what: 'range', range: [300, 400] },
      { what: 'window', window: [1, 2] },
      { what: 'diff', generations: [9] },
    ]);
    expect(out).toEqual(view({ cpus: [0] }));
    // the link written back carries none of it
    const q = new URLSearchParams(formatView(out));
    expect(['gen', 'range', 'window', 'diff'].map((k) => q.get(k))).toEqual([null, null, null, null]);
    expect([q.get('cpus'), q.get('stack'), q.get('find')]).toEqual(['0', HASH, 'kmalloc']);
  });

  it('drops the CPU list when none of it is in the capture, and "none" when no record lacks a generation', () => {
    const { view: out, dropped } = fitView(view({ cpus: [8], generation: 'none' }), { ...shape, generations: [1] });
    expect(out.cpus).toBeNull();
    expect(out.generation).toBeNull();
    expect(dropped).toEqual([
      { what: 'generation', generation: 'none' },
      { what: 'cpus', cpus: [8] },
    ]);
  });

  /** the sample's shape, and a view inside it: generation 3, CPUs 1 and 2, a quarter of its time */
  const sampleView = () => {
    const o = new Explorer(sampleCapture()).overview();
    const inside: [number, number] = [o.t0 + (o.t1 - o.t0) / 4, o.t0 + (o.t1 - o.t0) / 2];
    return { sample: shapeOf(o), inside, v: view({ generation: 3, cpus: [1, 2], range: inside }) };
  };

  it('against real captures: the sample’s own view fits it', () => {
    const { sample, v } = sampleView();
    // the sample: 4 CPUs, generations 1..3 (README "The sample capture")
    expect([sample.cpus, sample.generations.filter((g) => g !== 'none')]).toEqual([
      [0, 1, 2, 3],
      [1, 2, 3],
    ]);
    expect(fitView(v, sample).dropped).toEqual([]);
  });

  realIt('against real captures: the kprobe example lacks the sample view’s generation, CPUs and range', async () => {
    const { inside, v } = sampleView();
    const path = realTracePath('perf-tools-kprobe_example.txt');
    const kprobe = shapeOf(new Explorer(await loadFiles([{ name: 'kprobe_example.txt', blob: await openAsBlob(path) }])).overview());
    // counted in the shell: grep -oE '\[[0-9]{3}\] [^ ]+ [0-9]+\.[0-9]+:' F | cut -c1-5 | sort -u  ->  [000] [001]
    expect(kprobe.cpus).toEqual([0, 1]);
    // no v8 cookie: the CLI's summary says generations: []
    expect(kprobe.generations.filter((g) => g !== 'none')).toEqual([]);
    const { view: out, dropped } = fitView(v, kprobe);
    expect(dropped).toEqual([
      { what: 'generation', generation: 3 },
      { what: 'cpus', cpus: [2] },
      { what: 'range', range: inside },
    ]);
    expect([out.generation, out.cpus, out.range]).toEqual([null, [1], null]);
  });
});

describe('a link into a capture of more generations than its list holds', () => {
  it('keeps a numbered generation the list left out, and still drops one of a capture that lists them all', () => {
    const v = { ...DEFAULT_VIEW, generation: 15000 };
    const listed = { t0: 0, t1: 1, cpus: [0], generations: [1, 2, 3] as (number | 'none')[] };
    expect(fitView(v, { ...listed, generationsCut: 18990 }).view.generation).toBe(15000);
    expect(fitView(v, listed).view.generation).toBeNull();
    expect(fitView({ ...DEFAULT_VIEW, generation: 'none' }, { ...listed, generationsCut: 18990 }).view.generation).toBeNull();
  });
});
