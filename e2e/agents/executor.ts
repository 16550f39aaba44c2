import { TaskState, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { partsText, reverseText, textPart } from './card.ts';

/** How long a "slow" task stays WORKING before it completes on its own. */
const SLOW_MAX_MS = 30_000;
/** Granularity of the slow loop: small, so a cancel is noticed quickly. */
const SLOW_TICK_MS = 50;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Tasks whose message says "wait for release" stay WORKING until the test
 * releases them (`POST /_test/release`); `GET /_test/held` answers once one
 * is waiting. A test moves a fence in between, with no sleeps (issue 27).
 */
export class ReleaseGate {
  private waiting: Array<() => void> = [];
  private watchers: Array<() => void> = [];

  /** Resolves when the test releases this task. */
  hold(): Promise<void> {
    return new Promise((release) => {
      this.waiting.push(release);
      for (const w of this.watchers.splice(0)) w();
    });
  }

  /** Resolves once at least one task is held. */
  held(): Promise<void> {
    return this.waiting.length > 0 ? Promise.resolve() : new Promise((r) => this.watchers.push(r));
  }

  /** Releases every held task; returns how many. */
  release(): number {
    const all = this.waiting.splice(0);
    for (const r of all) r();
    return all.length;
  }
}
const status = (state: TaskState): TaskStatus => ({ state, message: undefined, timestamp: new Date().toISOString() });

/**
 * The honest reverse-echo executor: SUBMITTED → WORKING → artifact "result" → COMPLETED,
 * with `stepMs` between events so streaming clients see them as separate, spaced events.
 * A message containing "slow" stays WORKING (up to 30 s) so tests can cancel it.
 * A message containing "please fail" ends FAILED without artifacts.
 * A message containing "wait for release" stays WORKING until the test releases it ({@link ReleaseGate}).
 * A message containing "ask me" stops at INPUT_REQUIRED; the follow-up turn's text
 * is what gets reversed — unless the follow-up says "ask once more", which asks again.
 */
export class ReverseExecutor implements AgentExecutor {
  /** Task ids whose cancellation was requested; the execute loop polls this. */
  private readonly canceled = new Set<string>();
  /** contextId per running task: cancelTask only gets the taskId, but the status event should carry both. */
  private readonly contexts = new Map<string, string>();

  constructor(
    private readonly stepMs: number,
    readonly gate = new ReleaseGate(),
  ) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    const input = partsText(ctx.userMessage.parts);
    this.contexts.set(taskId, contextId);
    try {
      await this.run(ctx, bus, input);
    } finally {
      this.contexts.delete(taskId);
    }
  };

  private async run(ctx: RequestContext, bus: ExecutionEventBus, input: string): Promise<void> {
    const { taskId, contextId } = ctx;
    // The first event must be a Task, on follow-up turns too (SDK enforces ordering).
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        artifacts: [],
        history: [...(ctx.task?.history ?? []), ctx.userMessage],
        metadata: undefined,
        status: status(TaskState.TASK_STATE_SUBMITTED),
      }),
    );
    await sleep(this.stepMs);
    if (this.canceled.has(taskId)) return;
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_WORKING) }));
    if ((input.includes('ask me') && !ctx.task) || (input.includes('ask once more') && ctx.task)) {
      const question = { messageId: `${taskId}-q${ctx.task ? '-again' : ''}`, contextId, taskId, role: 2, parts: [textPart('what should I reverse?')], metadata: undefined, extensions: [], referenceTaskIds: [] };
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { ...status(TaskState.TASK_STATE_INPUT_REQUIRED), message: question } }));
      return;
    }
    if (input.includes('please fail')) {
      // A tool failure the agent reports honestly: FAILED, no artifacts, same on read-back.
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_FAILED) }));
      return;
    }
    if (input.includes('wait for release')) {
      await this.gate.hold();
    } else if (input.includes('slow')) {
      // Small ticks rather than one long sleep so cancellation stops us promptly.
      for (let waited = 0; waited < SLOW_MAX_MS; waited += SLOW_TICK_MS) {
        if (this.canceled.has(taskId)) return;
        await sleep(SLOW_TICK_MS);
      }
    } else {
      await sleep(this.stepMs);
    }
    if (this.canceled.has(taskId)) return;
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        append: false,
        lastChunk: true,
        metadata: undefined,
        artifact: {
          artifactId: `${taskId}-result`,
          name: 'result',
          description: '',
          parts: [textPart(reverseText(input))],
          metadata: undefined,
          extensions: [],
        },
      }),
    );
    await sleep(this.stepMs);
    if (this.canceled.has(taskId)) return;
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_COMPLETED) }));
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    // Flag first so the execute loop publishes nothing after CANCELED.
    this.canceled.add(taskId);
    const contextId = this.contexts.get(taskId) ?? '';
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: status(TaskState.TASK_STATE_CANCELED) }));
  };
}
