import { expect, it } from 'vitest';
import { duckMessage } from './sql-api.ts';

it("DuckDB's errors read as DuckDB prints them, whether they come as text or as JSON", () => {
  // the parser's error as DuckDB-WASM 1.32 throws it (seen in the page)
  const parser = JSON.stringify({ exception_type: 'Parser', exception_message: 'syntax error at or near "SELEC"', error_subtype: 'SYNTAX_ERROR', position: '0' });
  expect(duckMessage(new Error(parser))).toBe('Parser Error: syntax error at or near "SELEC"');
  expect(duckMessage(new Error('Catalog Error: Table with name nope does not exist!'))).toBe('Catalog Error: Table with name nope does not exist!');
  expect(duckMessage(new Error('{not json'))).toBe('{not json');
  expect(duckMessage(new Error('{"other":1}'))).toBe('{"other":1}');
  expect(duckMessage('plain')).toBe('plain');
});
