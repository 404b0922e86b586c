import { describe, expect, it } from 'vitest';
import { SQL_CANCELLED, type SqlTableIpc } from './sql-api.ts';
import type { SqlResult } from '../core/tables/sql-result.ts';
import { SqlClient, type SqlEngine } from './sql-client.ts';

/**
 * A stand-in engine that records what it is asked: a query named "stuck" never ends, one named
 * "slow" ends when cancelled (as DuckDB's interrupt does), any other answers at once.
 */
class FakeEngine implements SqlEngine {
  readonly version = 'fake';
  readonly bundle = 'none';
  log: string[] = [];
  terminated = false;
  private stopSlow: (() => void) | null = null;
  constructor(readonly id: number) {}
  async load(tables: SqlTableIpc[]) {
    this.log.push(`load ${tables.map((t) => t.name).join(',')}`);
  }
  async exec(sql: string) {
    this.log.push(`exec ${sql}`);
  }
  run(sql: string): Promise<SqlResult> {
    this.log.push(`run ${sql}`);
    const done: SqlResult = { columns: [{ name: 'x', type: 'Int32', numeric: true }], rows: [[this.id]], total: 1, elapsedMs: 0 };
    if (sql === 'stuck') return new Promise(() => {});
    if (sql === 'slow') return new Promise((_ok, fail) => (this.stopSlow = () => fail(new Error('INTERRUPT Error: Interrupted!'))));
    return Promise.resolve(done);
  }
  async cancel() {
    this.log.push('cancel');
    this.stopSlow?.();
    return true;
  }
  async terminate() {
    this.terminated = true;
  }
}

function client(graceMs = 20) {
  const engines: FakeEngine[] = [];
  const c = new SqlClient(
    () => {},
    graceMs,
    async () => {
      const e = new FakeEngine(engines.length + 1);
      engines.push(e);
      return e;
    },
  );
  let asked = 0;
  const source = async (): Promise<SqlTableIpc[]> => {
    asked++;
    return [{ name: 'events', rows: 3, ipc: new Uint8Array(1) }];
  };
  return { c, engines, source, asked: () => asked };
}

describe('SqlClient', () => {
  it('starts one engine however many ask, and puts tables and views in', async () => {
    const { c, engines, source } = client();
    const [a, b] = await Promise.all([c.start(), c.start()]);
    expect(a).toBe(b);
    expect(await c.setTables(source)).toEqual([{ name: 'events', rows: 3 }]);
    await c.setView('selection', 'CREATE OR REPLACE VIEW selection AS SELECT * FROM events');
    expect(engines.length).toBe(1);
    expect(engines[0].log).toEqual(['load events', 'exec CREATE OR REPLACE VIEW selection AS SELECT * FROM events']);
    expect((await c.run('q', 10)).rows).toEqual([[1]]);
  });

  it('a query DuckDB interrupts: cancelled, the same engine runs the next one', async () => {
    const { c, engines, source } = client();
    await c.setTables(source);
    const slow = c.run('slow', 10);
    await new Promise((r) => setTimeout(r, 0));
    expect(c.running).toBe(true);
    expect(await c.cancel()).toBe('interrupted');
    await expect(slow).rejects.toThrow(SQL_CANCELLED);
    expect(c.running).toBe(false);
    expect((await c.run('next', 10)).rows).toEqual([[1]]);
    expect(engines.length).toBe(1);
  });

  it('a query that does not stop: the engine is ended, a new one gets the tables and views, then runs the next query', async () => {
    const { c, engines, source, asked } = client();
    await c.setTables(source);
    await c.setView('selection', 'VIEW 1');
    await c.setView('selection', 'VIEW 2');
    const stuck = c.run('stuck', 10);
    await new Promise((r) => setTimeout(r, 0));
    const cancelled = c.cancel();
    await expect(stuck).rejects.toThrow(SQL_CANCELLED);
    // asked while the new engine is being filled: it waits, then runs there
    const next = c.run('next', 10);
    expect(await cancelled).toBe('restarted');
    expect((await next).rows).toEqual([[2]]);
    expect(engines[0].terminated).toBe(true);
    expect(engines.length).toBe(2);
    expect(asked()).toBe(2);
    // the latest view only, before any query
    expect(engines[1].log).toEqual(['load events', 'exec VIEW 2', 'run next']);
  });

  it('one query at a time; Cancel with none running does nothing', async () => {
    const { c } = client();
    expect(await c.cancel()).toBe('idle');
    const stuck = c.run('stuck', 10);
    await expect(c.run('other', 10)).rejects.toThrow('a query is running');
    void c.cancel();
    await expect(stuck).rejects.toThrow(SQL_CANCELLED);
  });
});
