import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IngestApi } from './ingest-api.ts';
import { DIED, IngestHost, WorkerFaultError, type SpawnedWorker, type WorkerFault } from './ingest-client.ts';

// The host's fault handling against fake workers: a call to a worker that died or hangs never
// settles by itself, so every check here is of what the host does about it.

interface Fake {
  name: string;
  terminated: boolean;
  die: (kind?: 'died' | 'error') => void;
  /** answers of ingest(): settled by the test, or never */
  answer: (v: unknown) => void;
}

function setup(opts: { hangMs?: number; indexHangMs?: number; maxRestarts?: number } = {}) {
  const workers: Fake[] = [];
  const faults: WorkerFault[] = [];
  const spawn = (name: string): SpawnedWorker => {
    let die!: Fake['die'];
    const gone = new Promise<Pick<WorkerFault, 'kind' | 'detail'>>((resolve) => {
      die = (kind = 'died') => resolve({ kind, detail: kind === 'died' ? DIED : 'failed (boom)' });
    });
    const fake: Fake = { name, terminated: false, die, answer: () => {} };
    const api = {
      ingest: () => new Promise((resolve) => (fake.answer = resolve)),
      topStacks: async () => `answer of ${name}`,
    } as unknown as SpawnedWorker['api'];
    workers.push(fake);
    return { api, gone, terminate: () => (fake.terminated = true) };
  };
  const host = new IngestHost({
    spawn,
    hangMs: opts.hangMs ?? 30_000,
    indexHangMs: opts.indexHangMs ?? 180_000,
    maxRestarts: opts.maxRestarts,
    onFault: (f) => faults.push(f),
  });
  const ingest = () => host.run((api) => (api as unknown as IngestApi).ingest({ id: 1, mode: 'replace', files: [] }, () => {}));
  return { host, workers, faults, ingest };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('IngestHost', () => {
  it('a worker that dies during a load: the load rejects naming the fault, a new worker answers the next call', async () => {
    const { host, workers, faults, ingest } = setup();
    const load = ingest();
    workers[0].die();
    await expect(load).rejects.toBeInstanceOf(WorkerFaultError);
    await expect(load).rejects.toThrow('the ingest worker stopped (it crashed, ran out of memory or was ended)');
    expect(faults).toEqual([{ kind: 'died', detail: DIED, worker: 1, restarted: true }]);
    expect(workers.length).toBe(2);
    expect(workers[0].terminated).toBe(true);
    expect(host.worker).toBe(2);
    expect(await host.run((api) => api.topStacks({} as never) as Promise<unknown>)).toBe(`answer of ${workers[1].name}`);
    // each worker has its own name (its liveness lock is named after it)
    expect(workers[0].name).not.toBe(workers[1].name);
  });

  it('an error event is a fault too', async () => {
    const { workers, faults, ingest } = setup();
    const load = ingest();
    workers[0].die('error');
    await expect(load).rejects.toThrow('the ingest worker failed (boom)');
    expect(faults[0]).toMatchObject({ kind: 'error', worker: 1, restarted: true });
  });

  it('a load with no progress for hangMs is taken for hung: the worker is ended and replaced', async () => {
    const { host, workers, faults, ingest } = setup({ hangMs: 5000, indexHangMs: 20_000 });
    host.busy(1);
    const load = ingest();
    // progress keeps it alive
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(4000);
      host.beat(1, 'reading');
    }
    expect(faults).toEqual([]);
    // once every byte is read, the longer bound holds
    host.beat(1, 'indexing');
    vi.advanceTimersByTime(15_000);
    expect(faults).toEqual([]);
    vi.advanceTimersByTime(6000);
    expect(faults).toEqual([{ kind: 'hung', detail: 'stopped answering (no progress for 20 s while indexing)', worker: 1, restarted: true }]);
    expect(workers[0].terminated).toBe(true);
    await expect(load).rejects.toThrow('the ingest worker stopped answering');
    // the dead worker's lock, granted once it was ended, is not a second fault
    workers[0].die();
    await settle();
    expect(faults.length).toBe(1);
    expect(host.worker).toBe(2);
  });

  it('a reading load silent past hangMs, and an idle worker never', async () => {
    const { host, faults } = setup({ hangMs: 5000 });
    vi.advanceTimersByTime(60_000);
    expect(faults).toEqual([]);
    host.busy(7);
    vi.advanceTimersByTime(4000);
    host.idle(7);
    vi.advanceTimersByTime(60_000);
    expect(faults).toEqual([]);
    host.busy(8);
    vi.advanceTimersByTime(6000);
    expect(faults.map((f) => f.detail)).toEqual(['stopped answering (no progress for 5.0 s)']);
  });

  it('onFault is told before the waiting calls reject, so a reopen it starts is there for their retry', async () => {
    const { workers, faults, ingest } = setup();
    let faultsWhenRejected = -1;
    const load = ingest().catch(() => (faultsWhenRejected = faults.length));
    workers[0].die();
    await load;
    expect(faultsWhenRejected).toBe(1);
  });

  it('gives up after maxRestarts faults in a minute: calls then reject at once', async () => {
    const { host, workers, faults } = setup({ maxRestarts: 2 });
    for (let i = 0; i < 3; i++) {
      workers[i].die('error');
      await settle();
    }
    expect(faults.map((f) => f.restarted)).toEqual([true, true, false]);
    expect(workers.length).toBe(3);
    await expect(host.run(async () => 'x')).rejects.toBeInstanceOf(WorkerFaultError);
  });
});
