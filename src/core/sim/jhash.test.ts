import { describe, expect, it } from 'vitest';
import { jhash2, jhash2i, jhash2iCopy, stackHash } from './jhash.ts';

// Vectors from the kernel's jhash2 (include/linux/jhash.h) compiled with gcc -O2 on x86_64:
// k[i] = 0x81000000 + i * 0x1234567 for i < 20; each row is [initval, length, jhash2(k, length, initval)].
const VECTORS: [number, number, number][] = [
  [0, 0, 3735928559],
  [0, 1, 1944777422],
  [0, 2, 2969406344],
  [0, 3, 679343743],
  [0, 4, 1168873852],
  [0, 5, 636736361],
  [0, 6, 2586376099],
  [0, 7, 411579315],
  [0, 8, 1420157550],
  [0, 9, 629007390],
  [0, 10, 4268888737],
  [0, 11, 962511840],
  [0, 12, 4160772087],
  [0, 13, 3430134883],
  [0, 14, 78365967],
  [0, 15, 1123098529],
  [0, 16, 3113388751],
  [0, 17, 2222563382],
  [0, 18, 2679102457],
  [0, 19, 1269822999],
  [0, 20, 2339720361],
  [1, 0, 3735928560],
  [1, 1, 2085505673],
  [1, 2, 301184011],
  [1, 3, 428865599],
  [1, 4, 2206906071],
  [1, 5, 3531682628],
  [1, 6, 402127911],
  [1, 7, 169077647],
  [1, 8, 541414375],
  [1, 9, 3738820503],
  [1, 10, 2370797856],
  [1, 11, 2561314522],
  [1, 12, 2239321234],
  [1, 13, 1300184308],
  [1, 14, 1228720184],
  [1, 15, 4240721922],
  [1, 16, 2463974986],
  [1, 17, 1800507694],
  [1, 18, 2965935748],
  [1, 19, 2922899052],
  [1, 20, 3178085787],
  [2654435769, 0, 2095397032],
  [2654435769, 1, 2845770129],
  [2654435769, 2, 539558710],
  [2654435769, 3, 4265767072],
  [2654435769, 4, 3649817127],
  [2654435769, 5, 2495819543],
  [2654435769, 6, 3592108990],
  [2654435769, 7, 352006711],
  [2654435769, 8, 1555251791],
  [2654435769, 9, 1163024057],
  [2654435769, 10, 2396952050],
  [2654435769, 11, 386560244],
  [2654435769, 12, 680299638],
  [2654435769, 13, 3247251267],
  [2654435769, 14, 1827366052],
  [2654435769, 15, 2107704546],
  [2654435769, 16, 3842584374],
  [2654435769, 17, 1149296427],
  [2654435769, 18, 2517371884],
  [2654435769, 19, 41341574],
  [2654435769, 20, 1980832833],
];

describe('jhash2', () => {
  const k = new Uint32Array(20).map((_, i) => (0x81000000 + i * 0x1234567) >>> 0);
  it.each(VECTORS)('initval %i, %i words', (seed, n, want) => {
    expect(jhash2(k, n, seed)).toBe(want);
  });

  it.each(VECTORS)('the copying jhash2 (initval %i, %i words) gives the same hash and writes exactly the words it read', (seed, n, want) => {
    const d = new Uint32Array(30).fill(0xdeadbeef);
    expect(jhash2iCopy(k, n, seed | 0, d, 5) >>> 0).toBe(want);
    expect(jhash2iCopy(k, n, seed | 0, d, 5)).toBe(jhash2i(k, n, seed | 0));
    expect(Array.from(d)).toEqual([...Array(5).fill(0xdeadbeef), ...k.subarray(0, n), ...Array(25 - n).fill(0xdeadbeef)]);
  });

  it('hashes a stack over its ips as little-endian u32 words, and never returns 0', () => {
    const ips = new BigUint64Array([0xffffffff81234567n, 0xffffffff81000010n]);
    const words = new Uint32Array([0x81234567, 0xffffffff, 0x81000010, 0xffffffff]);
    expect(stackHash(ips, 7)).toBe(jhash2(words, 4, 7) || 1);
  });
});
