import { describe, expect, it } from 'vitest';
import { ExplorerData } from '../query/explorer-data.ts';
import { handCapture, line, sampleCapture } from '../testing/explorer-fixtures.ts';
import { CHROME_PID, exportSelection } from './exports.ts';
import { flame } from '../query/flame.ts';
import { flameSvg, xmlEscape } from './flame-svg.ts';
import { ALL, type Selection } from '../query/api.ts';
import { selectionSummary } from '../query/selection-summary.ts';
import { ingestFiles } from '../testing/test-helpers.ts';

const foldedTotal = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .reduce((n, l) => n + Number(/ (\d+(?:\.\d+)?)$/.exec(l)![1]), 0);

/** Checks an XML document's tags balance and every `&` starts an entity; returns the names of the elements opened, in order. */
function checkXml(svg: string): string[] {
  expect(svg.startsWith('<?xml')).toBe(true);
  const body = svg.replace(/^<\?xml[^>]*\?>\s*/, '');
  const stack: string[] = [];
  const seen: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = tag.exec(body))) {
    const text = body.slice(last, m.index);
    expect(text).not.toMatch(/[<>]/);
    expect(text.replace(/&(amp|lt|gt|quot|apos);/g, '')).not.toContain('&');
    last = tag.lastIndex;
    const [, close, name, , self] = m;
    if (close) expect(stack.pop()).toBe(name);
    else {
      if (!self) stack.push(name);
      seen.push(name);
    }
  }
  expect(body.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
  return seen;
}

describe('exports', () => {
  const d = new ExplorerData(handCapture());

  it('folded: root;...;leaf count with sym+0xoff frames, summing to the occurrences', () => {
    // the hand capture's stacks, root first, as its trace and dumps print them
    expect(exportSelection(d, 'folded', ALL)).toBe('b+0x2;a+0x1 3\nb+0x2;a+0x9;d+0x4;a+0x1 1\nb+0x2;c+0x3 3\n');
    expect(exportSelection(d, 'folded', { range: null, generation: 2, cpus: null })).toBe('b+0x2;c+0x3 2\n');
    expect(exportSelection(d, 'folded', ALL, { weight: 'refcount' })).toBe('b+0x2;a+0x1 2\nb+0x2;a+0x9;d+0x4;a+0x1 1\nb+0x2;c+0x3 6\n');
    expect(exportSelection(d, 'folded', { range: null, generation: 3, cpus: null })).toBe('');
  });

  it('speedscope: a valid sampled profile, samples root first', () => {
    const f = JSON.parse(exportSelection(d, 'speedscope', ALL, { title: 'x' }));
    expect(f.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    const names = f.shared.frames.map((x: { name: string }) => x.name);
    expect(names).toEqual(['b+0x2', 'a+0x1', 'a+0x9', 'd+0x4', 'c+0x3']);
    const p = f.profiles[0];
    expect(p).toMatchObject({ type: 'sampled', name: 'x', unit: 'none', startValue: 0, endValue: 7, weights: [3, 1, 3] });
    expect(p.samples.map((s: number[]) => s.map((i) => names[i]).join(';'))).toEqual(['b+0x2;a+0x1', 'b+0x2;a+0x9;d+0x4;a+0x1', 'b+0x2;c+0x3']);
  });

  it('chrome trace: instant events in microseconds with status, stack, thread names', () => {
    const j = JSON.parse(exportSelection(d, 'chrome-trace', ALL));
    const evs = j.traceEvents.filter((e: { ph: string }) => e.ph === 'i');
    const meta = j.traceEvents.filter((e: { ph: string }) => e.ph === 'M');
    expect(evs.length).toBe(10);
    expect(evs[3]).toEqual({
      name: 'kmem_cache_alloc',
      cat: 'full',
      ph: 'i',
      s: 't',
      ts: 100000004,
      pid: CHROME_PID,
      tid: 99,
      // stack_hash of "a+0x1\nb+0x2", computed with Python's integers (stack-hash.test.ts)
      args: { cpu: 0, generation: 1, stack_hash: 'e5e29399c829f289', stack: ['a+0x1', 'b+0x2'] },
    });
    expect(evs[5]).toMatchObject({ name: 'sched_switch', cat: 'no-stack-record', args: { cpu: 1 } });
    expect(evs[8]).toMatchObject({ cat: 'no-dump', args: { cpu: 1, generation: 3, slot: 9 } });
    expect(meta).toEqual([
      { name: 'process_name', ph: 'M', pid: CHROME_PID, tid: 0, args: { name: 'ftrace (stackmap explorer)' } },
      { name: 'thread_name', ph: 'M', pid: CHROME_PID, tid: 1234, args: { name: 'bash' } },
      { name: 'thread_name', ph: 'M', pid: CHROME_PID, tid: 99, args: { name: 'sh' } },
    ]);
    const sel = JSON.parse(exportSelection(d, 'chrome-trace', { range: [101, 102], generation: null, cpus: [0] }));
    expect(sel.traceEvents.filter((e: { ph: string }) => e.ph === 'i').length).toBe(2);
  });

  it('svg: well-formed, a <title> per drawn frame, text escaped', () => {
    const svg = exportSelection(d, 'svg', ALL, { width: 800, granularity: 'function' });
    const tags = checkXml(svg);
    expect(tags.filter((t) => t === 'rect').length).toBe(7); // background + 6 nodes
    expect(tags.filter((t) => t === 'title').length).toBe(7); // document + 6 nodes
    expect(svg).toContain('<title>b (7, 100.00%)</title>');
    const sw = exportSelection(d, 'svg', ALL, { mode: 'sandwich', focus: 'a', granularity: 'function' });
    checkXml(sw);
    expect(sw).toContain('<title>d (1, 25.00%)</title>');
    // an ftrace capture's default is by call site: under b, a+0x1 and a+0x9 (HAND_DUMP_GEN1's stacks 1
    // and 3) are two nodes where by function they are one a: all, b, a+0x1, c+0x3, a+0x9, d+0x4, a+0x1
    const site = checkXml(exportSelection(d, 'svg', ALL, { width: 800 }));
    expect(site.filter((t) => t === 'rect').length).toBe(8);
  });

  it('svg escapes hostile names and titles', () => {
    const trace =
      [
        '# tracer: nop',
        line('x-1', 0, '1.000000', 'foo: a'),
        line('x-1', 0, '1.000000', '<stack trace>'),
        ' => <evil>&"\'fn+0x1/0x2',
        ' => caller+0x1/0x2',
      ].join('\n') + '\n';
    const x = new ExplorerData(ingestFiles([['trace', trace]]));
    const svg = exportSelection(x, 'svg', ALL, { title: 'a < b & c' });
    checkXml(svg);
    expect(svg).toContain('&lt;evil&gt;&amp;&quot;&apos;fn');
    expect(svg).toContain('a &lt; b &amp; c');
    expect(xmlEscape('\u0001ok')).toBe('ok');
    // an empty selection still gives a valid document
    checkXml(
      flameSvg(
        flame(x, { selection: { range: [5, 6], generation: null, cpus: null }, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null }),
      ),
    );
  });

  it('sample: folded lines sum to the occurrence count; every export parses', () => {
    const s = new ExplorerData(sampleCapture());
    const t0 = s.t.evTs.get(0);
    for (const sel of [ALL, { range: [t0 + 0.05, t0 + 0.4], generation: null, cpus: [0, 1] }, { range: null, generation: 2, cpus: null }] as Selection[]) {
      const sum = selectionSummary(s, sel);
      const occ = sum.resolved + sum.fullStacks;
      const folded = exportSelection(s, 'folded', sel);
      expect(foldedTotal(folded)).toBe(occ);
      expect(flame(s, { selection: sel, mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null }).tree.value[0]).toBe(occ);
      const ss = JSON.parse(exportSelection(s, 'speedscope', sel));
      expect(ss.profiles[0].weights.reduce((a: number, b: number) => a + b, 0)).toBe(occ);
      const ct = JSON.parse(exportSelection(s, 'chrome-trace', sel));
      expect(ct.traceEvents.filter((e: { ph: string }) => e.ph === 'i').length).toBe(sum.events);
      checkXml(exportSelection(s, 'svg', sel, { mode: 'bottom-up' }));
    }
  });
});

describe('folded export of hostile frames', () => {
  it('no control character passes raw into the folded text; ; becomes _, one line per stack', () => {
    const trace = [
      '# tracer: nop',
      line('evil-1', 0, '100.000001', 'kmem_cache_alloc: x=1'),
      line('evil-1', 0, '100.000001', '<stack trace>'),
      ' => \x1b[2Jleaf+0x1/0x10',
      ' => mid\r;x\x7f+0x2/0x20',
      ' => \u009b\u202eroot+0x3/0x30',
    ].join('\n');
    const d = new ExplorerData(ingestFiles([['trace', trace + '\n']]));
    // root first, written by hand from the frames above
    expect(exportSelection(d, 'folded', ALL)).toBe('\\x9b\\u202eroot+0x3;mid\\r_x\\x7f+0x2;\\x1b[2Jleaf+0x1 1\n');
  });
});
