import { describe, expect, it } from 'vitest';
import { framesOf, lazyFrames, withoutFrames } from './flame-frames.ts';
import { TreeBuilder } from './flame-tree.ts';

describe('a flame tree whose frames are made when first read', () => {
  const build = () => {
    const b = new TreeBuilder(3);
    // f -> g twice (two call sites of g: frames 10 and 12), f -> h once
    b.addAt([0, 1], [0, 1], [10, 11], 2);
    b.addAt([0, 2], [0, 1], [10, 9], 3);
    b.addAt([0, 1], [0, 1], [10, 12], 4);
    return { b, tree: b.build(['f', 'g', 'h'], 'all', null) };
  };

  it('runs `make` once, on the first read of a frame field, and gives what the builder gives', () => {
    const { b, tree } = build();
    const eager = b.nodeFrames(13, (f) => `fr${f}`);
    let made = 0;
    const t = lazyFrames(tree, () => (made++, b.nodeFrames(13, (f) => `fr${f}`)));
    expect(made).toBe(0);
    // what the page is sent: every field but the frames, and nothing made for it
    const sent = withoutFrames(t);
    expect(made).toBe(0);
    expect(Object.keys(sent).sort()).toEqual(
      Object.keys(tree)
        .filter((k) => !k.startsWith('frame'))
        .sort(),
    );
    expect(sent.value).toBe(tree.value);
    expect(framesOf(t)).toEqual(eager);
    expect(t.frameNames).toEqual(eager.frameNames);
    expect(made).toBe(1);
    // g merges its two call sites, heaviest first
    const g = Array.from(t.name).findIndex((k) => t.names[k] === 'g');
    expect(Array.from(t.frameOf.subarray(t.frameStart[g], t.frameStart[g + 1]), (k) => t.frameNames[k])).toEqual(['fr12', 'fr11']);
  });
});
