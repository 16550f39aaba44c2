/**
 * The durable follower (DESIGN: every open attempt is followed until it
 * ends). It claims follow-ups whose lease lapsed — their node died, handed
 * them over, or is waiting for the next poll — and continues them from the
 * store alone: find the remote task (recorded, or by the context Baton
 * named), read it, and commit the turn's verdict once it is terminal or
 * interrupted. Past its deadline a follow-up ends as `unknown`, held for
 * reconciliation and escalated, never silently dropped.
 */
import { utc } from '../records/time.ts';
import type { WorkRow } from '../store/tx/ops.ts';
import type { PathDeps } from './path/deps.ts';
import { rebuildTurn } from './path/rebuild-turn.ts';
import { completeQuietly } from './path/run-turn.ts';
import { verdict } from './path/verify.ts';

/** Follow-ups one pass claims; the rest wait for the next tick. */
const BATCH = 16;

export class Follower {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly deps: PathDeps) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.deps.follow.tickMs);
    this.timer.unref();
  }

  /** Stops claiming; waits for the follow-ups under way (each bounded by the lease). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  /** One pass: claim what nobody follows and continue each. */
  async tick(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      const now = this.deps.clock.now().getTime();
      const rows = await this.deps.store.work.claim(this.deps.node, utc(new Date(now)), this.leaseFrom(now), BATCH, this.deps.gatewayActor.object_id);
      for (const row of rows) this.track(this.resume(row));
      return rows.length;
    } catch {
      return 0; // the store is unavailable: the next tick tries again
    } finally {
      this.running = false;
    }
  }

  /** A delegatee notified Baton (or a poll is due): continue the attempt's open turns now, unless a node is on them. */
  async wake(attemptId: string): Promise<void> {
    for (const row of await this.deps.store.work.ofAttempt(attemptId)) {
      const claimed = await this.deps.store.work.claimIdle(row.effect_id, this.deps.node, this.leaseFrom(this.deps.clock.now().getTime()));
      if (claimed) this.track(this.resume(claimed));
    }
  }

  /** Continues one claimed follow-up until its verdict, the wait, or its deadline. */
  async resume(row: WorkRow): Promise<void> {
    const turn = await rebuildTurn(this.deps, row);
    if (!turn) return this.deps.store.work.done(row.effect_id);
    // An MCP call is the MCP adapter's to follow: a recorded task is polled on; without one the tool may have run — `unknown`.
    if (turn.attempt.body.remote.protocol === 'mcp') {
      if (this.deps.mcp) return this.deps.mcp.follow(turn, row);
      await verdict(this.deps, turn, { kind: 'lost', reason: 'the gateway stopped while the MCP tool call ran' });
      return;
    }
    const now = this.deps.clock.now().getTime();
    const deadline = Date.parse(row.deadline);
    if (now >= deadline) {
      await verdict(this.deps, turn, { kind: 'lost', reason: 'no terminal state before the follow-up deadline' });
      return;
    }
    // Waits within the lease, never past the deadline; the next try is due by the deadline at the latest.
    const until = Math.min(now + Math.min(this.deps.follow.blockingWaitMs, Math.floor(this.deps.follow.leaseMs / 2)), deadline);
    await completeQuietly(this.deps, turn, undefined, until, Math.min(this.backoff(row.tries), Math.max(0, deadline - until)));
  }

  private backoff(tries: number): number {
    return Math.min(this.deps.follow.pollMaxMs * 2 ** Math.min(tries, 10), 60_000);
  }

  private leaseFrom(now: number): string {
    return utc(new Date(now + this.deps.follow.leaseMs));
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }
}
