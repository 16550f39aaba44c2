import type { RequestHandler } from 'express';
import { TaskState, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type TaskStore } from '@a2a-js/sdk/server';
import { ReleaseGate } from './executor.ts';
import { textPart } from './card.ts';
import { methodOf, type Transport } from './testlog.ts';

/**
 * Hostile delegatees that stream without end (issue #25 items 15 and 19),
 * each bounded by its own count so a test stops by itself:
 * - artifact-flood: after its task, `count` append-artifact events of
 *   `eventBytes` each, then COMPLETED;
 * - status-flood: WORKING status events every `stepMs` until the test
 *   releases it (`POST /_test/release`) or `count` is reached, then the
 *   result and COMPLETED.
 * artifact-flood stops early once a client closed one of its streams;
 * status-flood goes on (its task is followed by polling).
 */
export type FloodKind = 'artifact-flood' | 'status-flood';

/** What the agent saw of its streams (`GET /_test/flood`). */
export interface FloodStats {
  /** Streams opened. */
  streams: number;
  /** Streams the client closed before the agent ended them. */
  cuts: number;
  /** Events written on the newest stream. */
  written: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const status = (state: TaskState): TaskStatus => ({ state, message: undefined, timestamp: new Date().toISOString() });

export class FloodExecutor implements AgentExecutor {
  readonly stats: FloodStats = { streams: 0, cuts: 0, written: 0 };

  constructor(
    private readonly kind: FloodKind,
    private readonly stepMs: number,
    private readonly count = 4_000,
    private readonly eventBytes = 1024,
    /** The agent's own task store: the SDK stops recording a stream's events once its client left. */
    private readonly tasks?: TaskStore,
    readonly gate = new ReleaseGate(),
  ) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    const cutsBefore = this.stats.cuts;
    const cut = () => this.stats.cuts > cutsBefore;
    bus.publish(AgentEvent.task({ id: taskId, contextId, artifacts: [], history: [ctx.userMessage], metadata: undefined, status: status(TaskState.TASK_STATE_SUBMITTED) }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_WORKING) }));
    if (this.kind === 'artifact-flood') {
      const chunk = 'x'.repeat(this.eventBytes);
      for (let i = 0; i < this.count && !cut(); i++) {
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: i > 0, lastChunk: false, metadata: undefined, artifact: { artifactId: `${taskId}-flood`, name: 'flood', description: '', parts: [textPart(chunk)], metadata: undefined, extensions: [] } }));
        await sleep(1); // paced, so the stream is still open when Baton cuts it
      }
    } else {
      let released = false;
      void this.gate.hold().then(() => (released = true));
      for (let i = 0; i < this.count && !released; i++) {
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_WORKING) }));
        await sleep(this.stepMs);
      }
      const artifact = { artifactId: `${taskId}-result`, name: 'result', description: '', parts: [textPart('flood over')], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined, artifact }));
      // Done whether or not a client still listens: GetTask says so (a follower polls it).
      const task = await this.tasks?.load(taskId, ctx.context);
      if (task) await this.tasks!.save({ ...task, artifacts: [artifact], status: status(TaskState.TASK_STATE_COMPLETED) }, ctx.context);
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_COMPLETED) }));
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', metadata: undefined, status: status(TaskState.TASK_STATE_CANCELED) }));
  };

  /** Counts a stream's events and notices a client that closes it before the agent ended it. */
  watch(transport: Transport): RequestHandler {
    return (req, res, next) => {
      if (transport !== 'jsonrpc' || methodOf(transport, req) !== 'SendStreamingMessage') return next();
      this.stats.streams += 1;
      this.stats.written = 0;
      const write = res.write.bind(res) as (...a: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        if (typeof chunk === 'string' && chunk.startsWith('data:')) this.stats.written += 1;
        return write(chunk, ...rest);
      }) as typeof res.write;
      res.on('close', () => {
        if (!res.writableEnded) this.stats.cuts += 1;
      });
      next();
    };
  }
}
