/**
 * Revocation propagation (RW-003 §8): "Descendants acknowledge or time out;
 * unknown acknowledgements trigger read-back and escalation." Baton tracks
 * every attempt that may still be running — in this process, and, after a
 * restart, every attempt whose reservation is unresolved — and on each sweep
 * asks the dispatcher to stop those whose fences no longer hold.
 */
import type { AttemptBody } from './attempt-record.ts';
import type { SealedRecord } from '../records/envelope.ts';

type Attempt = SealedRecord<AttemptBody>;

export class RunningAttempts {
  private readonly running = new Map<string, { attempt: Attempt; stopping: boolean }>();

  /** Records the newest revision; a closed attempt is no longer running. */
  track(attempt: Attempt): void {
    if (attempt.body.state === 'closed') this.running.delete(attempt.record_id);
    else this.running.set(attempt.record_id, { attempt, stopping: this.running.get(attempt.record_id)?.stopping ?? false });
  }

  get size(): number {
    return this.running.size;
  }

  /**
   * One pass: `stale` decides whether an attempt's fences moved; `stop`
   * cancels, reads back and escalates. Each attempt is stopped once; passes
   * are the caller's to serialise.
   */
  async sweep(stale: (a: Attempt) => Promise<boolean>, stop: (a: Attempt) => Promise<void>, failed: (a: Attempt, err: unknown) => Promise<void>): Promise<number> {
    let stopped = 0;
    for (const [id, entry] of [...this.running]) {
      if (entry.stopping || entry.attempt.body.remote.task_id === undefined) continue;
      try {
        if (!(await stale(entry.attempt))) continue;
        entry.stopping = true;
        stopped++;
        await stop(entry.attempt);
      } catch (err) {
        // One attempt's failure must not end the pass for the others; it is handed to the operator.
        await failed(entry.attempt, err).catch(() => undefined);
      } finally {
        const now = this.running.get(id);
        if (now?.stopping) this.running.delete(id);
      }
    }
    return stopped;
  }

  /** Claims the stop of an attempt outside the sweep; false when one is already under way here. */
  claimStop(id: string): boolean {
    const entry = this.running.get(id);
    if (entry?.stopping) return false;
    if (entry) entry.stopping = true;
    return true;
  }

  has(id: string): boolean {
    return this.running.has(id);
  }
}
