import type { TimelineRequest, TimelineResult } from '../../core/query/api.ts';
import { ingestWorker } from '../../state/load/load-worker.ts';

export interface TimelineAnswer {
  req: TimelineRequest;
  result: TimelineResult;
  /** the capture it is about */
  capture: number;
}

interface Wanted {
  key: string;
  req: TimelineRequest;
  capture: number;
}

/**
 * The timeline's counts while the view moves, outside React: one question in flight at a time,
 * and when its answer comes the newest view is asked next (views passed over in between are never
 * asked). So a zoom or pan that goes on is answered as fast as the worker's summaries allow,
 * instead of waiting for the input to stop, and the worker never queues up stale work.
 */
export class TimelineAsker {
  private wanted: Wanted | null = null;
  private asked: string | null = null;
  private inFlight = false;
  private closed = false;

  constructor(
    private readonly onAnswer: (a: TimelineAnswer) => void,
    private readonly onError: (message: string, capture: number) => void,
  ) {}

  /** The view to show now (null: none); asked once the question in flight is answered. */
  want(req: TimelineRequest | null, capture: number): void {
    this.wanted = req === null || capture === 0 ? null : { key: `${capture}|${JSON.stringify(req)}`, req, capture };
    this.pump();
  }

  close(): void {
    this.closed = true;
  }

  private pump(): void {
    const w = this.wanted;
    if (this.closed || this.inFlight || w === null || w.key === this.asked) return;
    this.inFlight = true;
    this.asked = w.key;
    ingestWorker()
      .timeline(w.req)
      .then(
        (result) => !this.closed && this.onAnswer({ req: w.req, result, capture: w.capture }),
        (e: unknown) => {
          // asked again with the next view (or this one, if it is still the newest) after a failure
          if (this.asked === w.key) this.asked = null;
          if (!this.closed) this.onError((e as Error).message, w.capture);
        },
      )
      .finally(() => {
        this.inFlight = false;
        if (this.wanted && this.wanted.key !== w.key) this.pump();
      });
  }
}
