import { expect, it } from 'vitest';
import { duckMessage } from './sql-api.ts';
import { CELL_CHARS, isCut, textCell, type SqlCutCell } from '../core/tables/sql-result.ts';

it("DuckDB's errors read as DuckDB prints them, whether they come as text or as JSON", () => {
  // the parser's error as DuckDB-WASM 1.32 throws it (seen in the page)
  const parser = JSON.stringify({
    exception_type: 'Parser',
    exception_message: 'syntax error at or near "SELEC"',
    error_subtype: 'SYNTAX_ERROR',
    position: '0',
  });
  expect(duckMessage(new Error(parser))).toBe('Parser Error: syntax error at or near "SELEC"');
  expect(duckMessage(new Error('Catalog Error: Table with name nope does not exist!'))).toBe('Catalog Error: Table with name nope does not exist!');
  expect(duckMessage(new Error('{not json'))).toBe('{not json');
  expect(duckMessage(new Error('{"other":1}'))).toBe('{"other":1}');
  expect(duckMessage('plain')).toBe('plain');
});

it('a text cell longer than CELL_CHARS comes cut: its head, its length, the whole on asking (issue 18.10)', () => {
  expect(CELL_CHARS).toBe(200);
  expect(textCell('x'.repeat(200))).toBe('x'.repeat(200));
  const big = 'ab'.repeat(500_000) + 'END';
  const c = textCell(big) as SqlCutCell;
  expect(isCut(c)).toBe(true);
  expect(c.cut).toBe('ab'.repeat(100));
  expect(c.chars).toBe(1_000_003);
  expect(c.whole() === big).toBe(true);
  // never half a surrogate pair: 199 x's then an emoji (two code units) straddling the cut
  const emoji = textCell('x'.repeat(199) + '😀' + 'y') as SqlCutCell;
  expect(emoji.cut).toBe('x'.repeat(199));
  expect(emoji.chars).toBe(202);
  expect(isCut('short')).toBe(false);
  expect(isCut(null)).toBe(false);
});
