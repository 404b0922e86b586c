/**
 * A zstd decoder (RFC 8878) that writes into the caller's buffer, for trace.dat version 7's
 * compressed blocks, whose uncompressed size is declared before them.
 *
 * Written here rather than taken from fzstd: fzstd's streaming decoder shifts its whole window
 * for every block (a frame declaring a large content size costs window x blocks: quadratic), and
 * neither of its decoders bounds what one compressed block writes, so a block of a few KB whose
 * sequences each ask for a 128 KB match ran for over a minute. Here the output buffer is the
 * window (nothing is shifted), and every block is checked against the 128 KiB the format allows
 * and against the room left in the buffer before a byte of it is copied: the work is linear in
 * the input plus the output, and the output never exceeds the buffer.
 *
 * What is not here: dictionaries (a frame naming one is an error; trace-cmd uses none) and the
 * optional content checksum (skipped, not verified).
 */

/** Bad or truncated zstd data: the message says what and where (an offset into the input). */
export class ZstdError extends Error {}

/** The frames hold more than the output buffer takes: nothing past its end was written. */
export class ZstdTooLong extends Error {}

/** The most one block may decompress to (Block_Maximum_Size, RFC 8878 3.1.1.2.4). */
export const BLOCK_MAX = 1 << 17;

const ZSTD_MAGIC = 0xfd2fb528;

/**
 * Decompresses every frame of `src` into `out` from offset 0; returns the bytes written. Throws
 * ZstdError on bad data and ZstdTooLong when the data would write past the end of `out`.
 */
export function zstdDecompressInto(src: Uint8Array, out: Uint8Array): number {
  let p = 0;
  let o = 0;
  while (p < src.length) {
    if (p + 4 > src.length) throw new ZstdError(`${src.length - p} bytes after the last frame at ${p}: not a frame`);
    const magic = u32(src, p);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // a skippable frame: magic, u32 size, that many bytes
      if (p + 8 > src.length) throw new ZstdError(`skippable frame at ${p} cut short`);
      const n = u32(src, p + 4);
      if (p + 8 + n > src.length) throw new ZstdError(`skippable frame at ${p} of ${n} bytes goes beyond the data`);
      p += 8 + n;
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new ZstdError(`no zstd frame at ${p} (magic 0x${magic.toString(16)})`);
    [p, o] = frame(src, p, out, o);
  }
  return o;
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/** Index of the highest set bit (x > 0). */
function highBit(x: number): number {
  return 31 - Math.clz32(x);
}

// ------------------------------------------------------------------ frames and blocks

interface FrameState {
  rep: [number, number, number];
  huf: Huf | null;
  ll: Fse | null;
  of: Fse | null;
  ml: Fse | null;
}

function frame(src: Uint8Array, p: number, out: Uint8Array, o: number): [number, number] {
  const at = p;
  if (p + 5 > src.length) throw new ZstdError(`frame header at ${at} cut short`);
  const fhd = src[p + 4];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  if (fhd & 8) throw new ZstdError(`frame at ${at}: reserved header bit set`);
  const checksum = (fhd >> 2) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
  let q = p + 5 + (single ? 0 : 1);
  if (q + dictBytes + fcsBytes > src.length) throw new ZstdError(`frame header at ${at} cut short`);
  let dict = 0;
  for (let i = dictBytes - 1; i >= 0; i--) dict = dict * 256 + src[q + i];
  if (dict !== 0) throw new ZstdError(`frame at ${at} needs dictionary ${dict}: not supported`);
  q += dictBytes;
  let fcs = -1;
  if (fcsBytes > 0) {
    fcs = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + src[q + i];
    if (fcsBytes === 2) fcs += 256;
    q += fcsBytes;
  }
  const start = o;
  if (fcs > out.length - start) throw new ZstdTooLong(`frame at ${at} declares ${fcs} bytes, ${out.length - start} are left`);
  const st: FrameState = { rep: [1, 4, 8], huf: null, ll: null, of: null, ml: null };
  for (;;) {
    if (q + 3 > src.length) throw new ZstdError(`block header at ${q} cut short`);
    const h = src[q] | (src[q + 1] << 8) | (src[q + 2] << 16);
    const blockAt = q;
    q += 3;
    const last = h & 1;
    const type = (h >> 1) & 3;
    const size = h >>> 3;
    if (type === 3) throw new ZstdError(`block at ${blockAt}: reserved block type`);
    if (size > BLOCK_MAX) throw new ZstdError(`block at ${blockAt}: ${size} bytes, over the ${BLOCK_MAX} a block may hold`);
    if (type === 1) {
      if (q + 1 > src.length) throw new ZstdError(`block at ${blockAt} cut short`);
      if (o + size > out.length) throw new ZstdTooLong(`block at ${blockAt} goes past the output`);
      out.fill(src[q], o, o + size);
      o += size;
      q += 1;
    } else {
      if (q + size > src.length) throw new ZstdError(`block at ${blockAt} of ${size} bytes cut short`);
      if (type === 0) {
        if (o + size > out.length) throw new ZstdTooLong(`block at ${blockAt} goes past the output`);
        out.set(src.subarray(q, q + size), o);
        o += size;
      } else o = compressedBlock(src, q, q + size, out, o, start, st);
      q += size;
    }
    if (last) break;
  }
  if (checksum) {
    if (q + 4 > src.length) throw new ZstdError(`frame at ${at}: its checksum is cut short`);
    q += 4;
  }
  if (fcs >= 0 && o - start !== fcs) throw new ZstdError(`frame at ${at} declares ${fcs} bytes and holds ${o - start}`);
  return [q, o];
}

/** Literals decoded from Huffman or RLE land here (a block holds at most BLOCK_MAX of them). */
const scratch = new Uint8Array(BLOCK_MAX);

function compressedBlock(src: Uint8Array, p: number, end: number, out: Uint8Array, o: number, frameStart: number, st: FrameState): number {
  const blockAt = p - 3;
  const limit = o + BLOCK_MAX;
  // ---- literals
  if (p >= end) throw new ZstdError(`block at ${blockAt}: no literals section`);
  const b0 = src[p];
  const ltype = b0 & 3;
  const sf = (b0 >> 2) & 3;
  let lit: Uint8Array;
  let litLen: number;
  if (ltype < 2) {
    let hl: number;
    if ((sf & 1) === 0) {
      litLen = b0 >> 3;
      hl = 1;
    } else if (sf === 1) {
      if (p + 2 > end) throw new ZstdError(`block at ${blockAt}: literals header cut short`);
      litLen = (b0 >> 4) + (src[p + 1] << 4);
      hl = 2;
    } else {
      if (p + 3 > end) throw new ZstdError(`block at ${blockAt}: literals header cut short`);
      litLen = (b0 >> 4) + (src[p + 1] << 4) + (src[p + 2] << 12);
      hl = 3;
    }
    if (litLen > BLOCK_MAX) throw new ZstdError(`block at ${blockAt}: ${litLen} literals, over ${BLOCK_MAX}`);
    p += hl;
    if (ltype === 0) {
      if (p + litLen > end) throw new ZstdError(`block at ${blockAt}: raw literals cut short`);
      lit = src.subarray(p, p + litLen);
      p += litLen;
    } else {
      if (p + 1 > end) throw new ZstdError(`block at ${blockAt}: RLE literals cut short`);
      scratch.fill(src[p], 0, litLen);
      lit = scratch;
      p += 1;
    }
  } else {
    const hl = sf <= 1 ? 3 : sf === 2 ? 4 : 5;
    if (p + hl > end) throw new ZstdError(`block at ${blockAt}: literals header cut short`);
    let compSize: number;
    if (hl === 3) {
      const v = b0 | (src[p + 1] << 8) | (src[p + 2] << 16);
      litLen = (v >> 4) & 0x3ff;
      compSize = (v >> 14) & 0x3ff;
    } else if (hl === 4) {
      const v = u32(src, p);
      litLen = (v >>> 4) & 0x3fff;
      compSize = (v >>> 18) & 0x3fff;
    } else {
      const v = u32(src, p);
      litLen = (v >>> 4) & 0x3ffff;
      compSize = (v >>> 22) + src[p + 4] * 1024;
    }
    if (litLen > BLOCK_MAX) throw new ZstdError(`block at ${blockAt}: ${litLen} literals, over ${BLOCK_MAX}`);
    p += hl;
    const cend = p + compSize;
    if (cend > end) throw new ZstdError(`block at ${blockAt}: compressed literals cut short`);
    if (ltype === 2) [st.huf, p] = readHuf(src, p, cend);
    else if (!st.huf) throw new ZstdError(`block at ${blockAt}: treeless literals with no earlier Huffman table`);
    const huf = st.huf!;
    if (sf === 0) hufStream(huf, src, p, cend, scratch, 0, litLen);
    else {
      if (p + 6 > cend) throw new ZstdError(`block at ${blockAt}: literal streams' jump table cut short`);
      const s1 = src[p] | (src[p + 1] << 8);
      const s2 = src[p + 2] | (src[p + 3] << 8);
      const s3 = src[p + 4] | (src[p + 5] << 8);
      let q = p + 6;
      const seg = (litLen + 3) >> 2;
      if (q + s1 + s2 + s3 > cend || 3 * seg > litLen) throw new ZstdError(`block at ${blockAt}: literal streams do not fit`);
      hufStream(huf, src, q, q + s1, scratch, 0, seg);
      q += s1;
      hufStream(huf, src, q, q + s2, scratch, seg, seg);
      q += s2;
      hufStream(huf, src, q, q + s3, scratch, 2 * seg, seg);
      q += s3;
      hufStream(huf, src, q, cend, scratch, 3 * seg, litLen - 3 * seg);
    }
    lit = scratch;
    p = cend;
  }

  // ---- sequences
  if (p >= end) throw new ZstdError(`block at ${blockAt}: no sequences section`);
  let nbSeq = src[p++];
  if (nbSeq >= 128) {
    if (nbSeq < 255) {
      if (p + 1 > end) throw new ZstdError(`block at ${blockAt}: sequence count cut short`);
      nbSeq = ((nbSeq - 128) << 8) + src[p++];
    } else {
      if (p + 2 > end) throw new ZstdError(`block at ${blockAt}: sequence count cut short`);
      nbSeq = src[p] + (src[p + 1] << 8) + 0x7f00;
      p += 2;
    }
  }
  let lp = 0;
  if (nbSeq > 0) {
    // every sequence writes a match of at least 3 bytes
    if (nbSeq * 3 > BLOCK_MAX) throw new ZstdError(`block at ${blockAt}: ${nbSeq} sequences cannot fit in one block`);
    if (p >= end) throw new ZstdError(`block at ${blockAt}: sequence modes cut short`);
    const modes = src[p++];
    if (modes & 3) throw new ZstdError(`block at ${blockAt}: reserved sequence mode bits set`);
    let t: Fse;
    [t, p] = seqTable((modes >> 6) & 3, src, p, end, LL_DEFAULT, 9, 35, st.ll, blockAt, 'literal length');
    st.ll = t;
    [t, p] = seqTable((modes >> 4) & 3, src, p, end, OF_DEFAULT, 8, 31, st.of, blockAt, 'offset');
    st.of = t;
    [t, p] = seqTable((modes >> 2) & 3, src, p, end, ML_DEFAULT, 9, 52, st.ml, blockAt, 'match length');
    st.ml = t;
    const ll = st.ll!;
    const of = st.of!;
    const ml = st.ml!;
    const br = new BackBits(src, p, end, blockAt);
    let llS = br.read(ll.log);
    let ofS = br.read(of.log);
    let mlS = br.read(ml.log);
    const rep = st.rep;
    for (let i = 0; i < nbSeq; i++) {
      const ofCode = of.sym[ofS];
      const llCode = ll.sym[llS];
      const mlCode = ml.sym[mlS];
      let off = 2 ** ofCode + br.read(ofCode);
      const mlen = ML_BASE[mlCode] + br.read(ML_BITS[mlCode]);
      const llen = LL_BASE[llCode] + br.read(LL_BITS[llCode]);
      if (i + 1 < nbSeq) {
        llS = ll.base[llS] + br.read(ll.bits[llS]);
        mlS = ml.base[mlS] + br.read(ml.bits[mlS]);
        ofS = of.base[ofS] + br.read(of.bits[ofS]);
      }
      if (off > 3) {
        off -= 3;
        rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = off;
      } else {
        const idx = off - 1 + (llen === 0 ? 1 : 0);
        if (idx === 0) off = rep[0];
        else {
          off = idx < 3 ? rep[idx] : rep[0] - 1;
          if (idx > 1) rep[2] = rep[1];
          rep[1] = rep[0];
          rep[0] = off;
        }
      }
      // checked before anything is copied: the block's limit, the buffer's end, the literals left, the distance back
      const need = o + llen + mlen;
      if (need > limit) throw new ZstdError(`block at ${blockAt}: its sequences write more than ${BLOCK_MAX} bytes`);
      if (need > out.length) throw new ZstdTooLong(`block at ${blockAt} goes past the output`);
      if (lp + llen > litLen) throw new ZstdError(`block at ${blockAt}: sequence ${i} takes more literals than there are`);
      if (llen > 0) {
        out.set(lit.subarray(lp, lp + llen), o);
        o += llen;
        lp += llen;
      }
      if (off === 0 || off > o - frameStart) throw new ZstdError(`block at ${blockAt}: sequence ${i} matches ${off} bytes back, before the frame's start`);
      const from = o - off;
      let left = mlen;
      while (left > 0) {
        const n = Math.min(left, o - from);
        out.copyWithin(o, from, from + n);
        o += n;
        left -= n;
      }
    }
    if (br.off !== 0) throw new ZstdError(`block at ${blockAt}: the sequences bitstream does not end where its sequences do`);
  } else if (p !== end) throw new ZstdError(`block at ${blockAt}: ${end - p} bytes after a block with no sequences`);
  const rest = litLen - lp;
  if (o + rest > limit) throw new ZstdError(`block at ${blockAt}: writes more than ${BLOCK_MAX} bytes`);
  if (o + rest > out.length) throw new ZstdTooLong(`block at ${blockAt} goes past the output`);
  out.set(lit.subarray(lp, litLen), o);
  return o + rest;
}

// ------------------------------------------------------------------ bitstreams

/**
 * A backward bitstream over src[start, end) (RFC 8878 4.1): read from its last bit toward its
 * first, after the end marker (the highest set bit of the last byte). Reads past the first bit
 * give zeros and leave `off` negative, as the format's overflow rule has it.
 */
class BackBits {
  /** bits not read yet */
  off: number;
  constructor(
    private readonly src: Uint8Array,
    private readonly start: number,
    private readonly end: number,
    at: number,
  ) {
    if (end <= start) throw new ZstdError(`block at ${at}: an empty bitstream`);
    const lastByte = src[end - 1];
    if (lastByte === 0) throw new ZstdError(`block at ${at}: a bitstream without its end marker`);
    this.off = (end - start - 1) * 8 + highBit(lastByte);
  }
  read(n: number): number {
    if (n === 0) return 0;
    this.off -= n;
    if (this.off >= 0) return this.bits(this.off, n);
    const k = n + this.off;
    return k > 0 ? this.bits(0, k) * 2 ** -this.off : 0;
  }
  /** bits [pos, pos + n) of the stream, the first one lowest */
  private bits(pos: number, n: number): number {
    if (n > 24) return this.bits(pos, 16) + this.bits(pos + 16, n - 16) * 65536;
    const s = this.src;
    const e = this.end;
    const i = this.start + (pos >> 3);
    let w = s[i];
    if (i + 1 < e) w |= s[i + 1] << 8;
    if (i + 2 < e) w |= s[i + 2] << 16;
    if (i + 3 < e) w |= s[i + 3] << 24;
    return (w >>> (pos & 7)) & ((1 << n) - 1);
  }
}

// ------------------------------------------------------------------ FSE

/** An FSE decoding table: per state its symbol, the bits to read and the base of the next state. */
interface Fse {
  log: number;
  sym: Uint8Array;
  bits: Uint8Array;
  base: Uint16Array;
}

/** The table of normalized counts `norm` (a -1 is a "less than 1" symbol) over 2^log states. */
function fseTable(norm: ArrayLike<number>, n: number, log: number): Fse {
  const size = 1 << log;
  const sym = new Uint8Array(size);
  const bits = new Uint8Array(size);
  const base = new Uint16Array(size);
  const next = new Uint16Array(n);
  let high = size;
  for (let s = 0; s < n; s++) {
    if (norm[s] === -1) {
      sym[--high] = s;
      next[s] = 1;
    }
  }
  const step = (size >> 1) + (size >> 3) + 3;
  const mask = size - 1;
  let pos = 0;
  for (let s = 0; s < n; s++) {
    if (norm[s] <= 0) continue;
    next[s] = norm[s];
    for (let i = 0; i < norm[s]; i++) {
      sym[pos] = s;
      do pos = (pos + step) & mask;
      while (pos >= high);
    }
  }
  if (pos !== 0) throw new ZstdError('an FSE table that does not fill its states');
  for (let i = 0; i < size; i++) {
    const d = next[sym[i]]++;
    const nb = log - highBit(d);
    bits[i] = nb;
    base[i] = (d << nb) - size;
  }
  return { log, sym, bits, base };
}

/**
 * An FSE table description (RFC 8878 4.1.1) at src[p..end): the table and the offset after it.
 * The counts must add up to 2^log exactly, and no symbol beyond `maxSym` may be given one.
 */
function fseHeader(src: Uint8Array, p: number, end: number, maxLog: number, maxSym: number, what: string): [Fse, number] {
  const avail = (end - p) * 8;
  let pos = 0;
  const read = (n: number): number => {
    let v = 0;
    for (let k = 0; k < n; k++) {
      const b = pos + k;
      if (b < avail && (src[p + (b >> 3)] >> (b & 7)) & 1) v |= 1 << k;
    }
    pos += n;
    return v;
  };
  const log = 5 + read(4);
  if (log > maxLog) throw new ZstdError(`${what} table: accuracy log ${log} over ${maxLog}`);
  let remaining = 1 << log;
  const norm = new Int16Array(maxSym + 1);
  let n = 0;
  while (remaining > 0 && n <= maxSym && pos <= avail) {
    const nb = highBit(remaining + 1) + 1;
    let v = read(nb);
    const lowMask = (1 << (nb - 1)) - 1;
    const threshold = (1 << nb) - 1 - (remaining + 1);
    if ((v & lowMask) < threshold) {
      pos -= 1;
      v &= lowMask;
    } else if (v > lowMask) v -= threshold;
    const count = v - 1;
    remaining -= count < 0 ? -count : count;
    norm[n++] = count;
    if (count === 0) {
      let rep = read(2);
      for (;;) {
        for (let i = 0; i < rep && n <= maxSym; i++) norm[n++] = 0;
        if (rep === 3 && n <= maxSym && pos <= avail) rep = read(2);
        else break;
      }
    }
  }
  if (remaining !== 0) throw new ZstdError(`${what} table: its counts do not add up to ${1 << log}`);
  if (pos > avail) throw new ZstdError(`${what} table cut short`);
  return [fseTable(norm, n, log), p + ((pos + 7) >> 3)];
}

function seqTable(
  mode: number,
  src: Uint8Array,
  p: number,
  end: number,
  predefined: Fse,
  maxLog: number,
  maxSym: number,
  prev: Fse | null,
  at: number,
  what: string,
): [Fse, number] {
  if (mode === 0) return [predefined, p];
  if (mode === 1) {
    if (p >= end) throw new ZstdError(`block at ${at}: ${what} RLE symbol cut short`);
    const s = src[p];
    if (s > maxSym) throw new ZstdError(`block at ${at}: ${what} code ${s} over ${maxSym}`);
    return [{ log: 0, sym: Uint8Array.of(s), bits: Uint8Array.of(0), base: Uint16Array.of(0) }, p + 1];
  }
  if (mode === 2) return fseHeader(src, p, end, maxLog, maxSym, `block at ${at}: ${what}`);
  if (!prev) throw new ZstdError(`block at ${at}: ${what} table repeated with none before it`);
  return [prev, p];
}

// the predefined distributions (RFC 8878 3.1.1.3.2.2)
const LL_DEFAULT = fseTable([4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1], 36, 6);
const ML_DEFAULT = fseTable(
  [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1,
    -1, -1, -1,
  ],
  53,
  6,
);
const OF_DEFAULT = fseTable([1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1], 29, 5);

// literal length and match length codes: baselines and extra bits (RFC 8878 3.1.1.3.2.1.1)
const LL_BASE = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
const LL_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
const ML_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67,
  83, 99, 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539,
];
const ML_BITS = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14,
  15, 16,
];

// ------------------------------------------------------------------ Huffman

/** A Huffman decoding table over maxBits-bit states: each state's symbol and code length. */
interface Huf {
  maxBits: number;
  sym: Uint8Array;
  bits: Uint8Array;
}

/** A Huffman tree description (RFC 8878 4.2.1) at src[p..end): the table and the offset after it. */
function readHuf(src: Uint8Array, p: number, end: number): [Huf, number] {
  if (p >= end) throw new ZstdError(`Huffman tree description at ${p} cut short`);
  const head = src[p++];
  const w = new Uint8Array(260);
  let n = 0;
  if (head < 128) {
    // weights compressed with FSE: two states over one table, until the stream runs out
    const e = p + head;
    if (e > end) throw new ZstdError(`Huffman weights at ${p} cut short`);
    let t: Fse;
    [t, p] = fseHeader(src, p, e, 6, 255, 'Huffman weights');
    const br = new BackBits(src, p, e, p);
    let s1 = br.read(t.log);
    let s2 = br.read(t.log);
    for (;;) {
      if (n > 255) throw new ZstdError('Huffman weights: more than 255 of them');
      w[n++] = t.sym[s1];
      s1 = t.base[s1] + br.read(t.bits[s1]);
      if (br.off < 0) {
        w[n++] = t.sym[s2];
        break;
      }
      w[n++] = t.sym[s2];
      s2 = t.base[s2] + br.read(t.bits[s2]);
      if (br.off < 0) {
        w[n++] = t.sym[s1];
        break;
      }
    }
    if (n > 255) throw new ZstdError('Huffman weights: more than 255 of them');
    p = e;
  } else {
    n = head - 127;
    const bytes = (n + 1) >> 1;
    if (p + bytes > end) throw new ZstdError(`Huffman weights at ${p} cut short`);
    for (let i = 0; i < n; i++) w[i] = i & 1 ? src[p + (i >> 1)] & 15 : src[p + (i >> 1)] >> 4;
    p += bytes;
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (w[i] > 11) throw new ZstdError(`Huffman weight ${w[i]} over 11`);
    if (w[i] > 0) total += 1 << (w[i] - 1);
  }
  if (total === 0) throw new ZstdError('Huffman weights all zero');
  const maxBits = highBit(total) + 1;
  if (maxBits > 11) throw new ZstdError(`Huffman codes of ${maxBits} bits, over 11`);
  const rest = (1 << maxBits) - total;
  if (rest & (rest - 1)) throw new ZstdError('Huffman weights that do not make a whole tree');
  w[n++] = highBit(rest) + 1;
  const size = 1 << maxBits;
  const sym = new Uint8Array(size);
  const bits = new Uint8Array(size);
  const rankCount = new Uint16Array(maxBits + 2);
  const nbOf = new Uint8Array(n);
  for (let s = 0; s < n; s++) {
    nbOf[s] = w[s] ? maxBits + 1 - w[s] : 0;
    rankCount[nbOf[s]]++;
  }
  // the longest codes take the lowest states
  const rankIdx = new Uint32Array(maxBits + 2);
  for (let i = maxBits; i >= 1; i--) {
    rankIdx[i - 1] = rankIdx[i] + rankCount[i] * (1 << (maxBits - i));
    bits.fill(i, rankIdx[i], rankIdx[i - 1]);
  }
  for (let s = 0; s < n; s++) {
    const nb = nbOf[s];
    if (!nb) continue;
    const len = 1 << (maxBits - nb);
    sym.fill(s, rankIdx[nb], rankIdx[nb] + len);
    rankIdx[nb] += len;
  }
  return [{ maxBits, sym, bits }, p];
}

/** Decodes `count` literals of one Huffman stream src[start..end) into out[o..]. */
function hufStream(h: Huf, src: Uint8Array, start: number, end: number, out: Uint8Array, o: number, count: number): void {
  const br = new BackBits(src, start, end, start);
  const mask = (1 << h.maxBits) - 1;
  let state = br.read(h.maxBits);
  for (let i = 0; i < count; i++) {
    out[o + i] = h.sym[state];
    const nb = h.bits[state];
    state = ((state << nb) + br.read(nb)) & mask;
  }
  if (br.off !== -h.maxBits) throw new ZstdError(`Huffman stream at ${start}: its bits do not end with its ${count} literals`);
}
