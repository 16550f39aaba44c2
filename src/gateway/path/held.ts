/**
 * Tasks held at the human gate, once a named human authority decided
 * (src/gates, RW-003 §6): an approved request goes through the same admit →
 * forward → follow → verify path as any first turn (path/gate.ts binds the
 * approval), approvals recorded elsewhere are swept up on each node, and a
 * reviewer's decision on a verified effect (T4) is recorded. The dispatcher
 * delegates here; holding, listing and withdrawing a request are in gate.ts.
 */
import type { Acting } from '../../gates/approvals.ts';
import { MCP_CALL } from '../../contracts/machine-preset.ts';
import { BatonError, isBatonError } from '../../errors.ts';
import type { Attempt } from '../attempts.ts';
import type { PathDeps } from './deps.ts';
import { wireParams } from './forward.ts';
import { admitApproved } from './gate.ts';
import { reviewEffect } from './review.ts';
import { completeQuietly, noteRemoteTask, send } from './run-turn.ts';

export class HeldTasks {
  /** `inBackground` tracks the turn followed after the approver was answered (awaited on shutdown). */
  constructor(
    private readonly deps: PathDeps,
    private readonly inBackground: (p: Promise<unknown>) => void,
  ) {}

  /**
   * Forwards an effect a named human authority approved. Returns once the
   * delegatee has the task; refusals carry their ADR-0014 code and are
   * recorded on the request.
   */
  async resumeApproved(taskId: string): Promise<Attempt> {
    if (!this.deps.gates) throw new BatonError('unsupported', 'no approvals are configured');
    // An approved MCP call is the MCP adapter's to admit and run (src/mcp/gate.ts).
    if ((await this.deps.gates.byTask(taskId))?.body.operation === MCP_CALL) {
      if (!this.deps.mcp) throw new BatonError('unsupported', 'this gateway serves no MCP servers', { task: taskId });
      return this.deps.mcp.resumeApproved(taskId);
    }
    const { turn, params } = await admitApproved(this.deps, this.deps.gates, taskId);
    const sent = await send(this.deps, turn, wireParams(this.deps, turn, params, false), false);
    if (sent.kind === 'reply' && sent.result.task) turn.remoteTaskId ??= (sent.result.task as { id?: string }).id;
    await noteRemoteTask(this.deps, turn);
    this.inBackground(completeQuietly(this.deps, turn, sent, this.deps.clock.now().getTime() + this.deps.follow.blockingWaitMs));
    return this.deps.attempts.latest(turn.attempt);
  }

  /**
   * Forwards every approved request not yet admitted: approvals recorded by
   * the CLI or on another node, or whose admission failed transiently. Run
   * on each node's sweep; a request admitted by another node first is
   * refused here as a second use and skipped. Returns how many were admitted.
   */
  async sweepApprovals(resume: (taskId: string) => Promise<Attempt>, onError: (taskId: string, err: unknown) => void): Promise<number> {
    if (!this.deps.gates) return 0;
    let admitted = 0;
    for (const r of await this.deps.gates.list({ state: 'approved', limit: 100 })) {
      try {
        await resume(r.body.task_id);
        admitted++;
      } catch (err) {
        if (!(isBatonError(err) && err.details.rule === 'approval_used')) onError(r.body.task_id, err);
      }
    }
    return admitted;
  }

  /** RW-003 §6 T4: the reviewer's decision on a verified effect (src/gateway/path/review.ts). */
  review(taskId: string, decision: 'approve' | 'deny', note: string, by: Acting): Promise<Attempt> {
    if (!this.deps.gates) throw new BatonError('unsupported', 'no approvals are configured');
    return reviewEffect(this.deps, this.deps.gates, taskId, decision, note, by);
  }
}
