/**
 * Baton's A2ARequestHandler for one delegatee, behind the SDK's express
 * adapters. The SDK hands us its internal types; the core works on v1.0
 * wire JSON, so this edge converts with the SDK's own codecs and maps
 * Baton's ADR-0014 codes onto A2A errors. Nothing here decides authority.
 */
import { ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, type AgentCard, type Message } from '@a2a-js/sdk';
import { PushNotificationNotSupportedError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { JsonValue } from '../records/strict-json.ts';
import { toA2AError, type Binding } from './a2a-error.ts';
import type { Caller } from './callers.ts';
import type { PushRegistry } from '../push/registry.ts';
import { TaskNotFound, type Attempt, type Dispatcher } from './dispatcher.ts';

/** What the A2A edge needs of the request path: the Dispatcher's task operations, and nothing else. */
export type TaskService = Pick<Dispatcher, 'send' | 'stream' | 'getTask' | 'listTasks' | 'cancel' | 'resubscribe' | 'attemptFor' | 'subscribePush'>;
import { CONTRACT_EXTENSION, stateForOutcome } from './present.ts';

export { toA2AError } from './a2a-error.ts';

type Json = { [key: string]: JsonValue };

/** Per-request facts the express edge established before the SDK ran, keyed by the request's headers object. */
export interface RequestFacts {
  caller: Caller;
  /** The raw params (JSON-RPC) or body (REST) exactly as received. */
  raw?: Json;
  /** A signal that aborts when the caller's connection closes before its answer was written (caller-scope.ts), made on demand. */
  callerLeft?: () => AbortSignal;
}

/** Metadata key on Baton's own front door that names the delegatee a message is for. */
export const DELEGATEE_METADATA = 'urn:baton:delegatee';

export interface HandlerOptions {
  /** A fixed delegatee (/agents/<id>), or undefined for Baton's own door, where the message names one. */
  delegatee?: string;
  card: () => Promise<AgentCard>;
  /** The extended card for an authenticated caller; defaults to the public card. */
  extendedCard?: (caller: Caller) => Promise<AgentCard>;
  /** Integrators' webhooks; absent when push is disabled. */
  push?: PushRegistry;
}

export class BatonA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly opts: HandlerOptions,
    private readonly dispatcher: TaskService,
    private readonly facts: WeakMap<object, RequestFacts>,
    /** The binding this handler serves (one handler per binding): errors are rendered for it. */
    private readonly binding: Binding,
  ) {}

  /** The SDK asks for the card on every request (version check); a card that cannot be built is an A2A error, not a 500. */
  getAgentCard(): Promise<AgentCard> {
    return this.guard(() => this.opts.card());
  }

  /**
   * A2A §3.1.11: only an agent whose card declares `capabilities.extendedAgentCard`
   * serves one; any other answers UnsupportedOperationError, never its public card.
   */
  async getAuthenticatedExtendedAgentCard(_params: unknown, ctx: ServerCallContext): Promise<AgentCard> {
    const { caller } = this.factsOf(ctx);
    const extended = this.opts.extendedCard;
    if (!extended || (await this.opts.card()).capabilities?.extendedAgentCard !== true) {
      throw new UnsupportedOperationError('this agent declares no extended Agent Card');
    }
    return this.guard(() => extended(caller));
  }

  /** Which delegatee a send is for: the door's, or the one the message names on Baton's own door. */
  private delegateeOf(raw: Json | undefined): string {
    if (this.opts.delegatee !== undefined) return this.opts.delegatee;
    const meta = (raw?.message as Json | undefined)?.metadata as Json | undefined;
    const id = meta?.[DELEGATEE_METADATA];
    if (typeof id !== 'string') throw new UnsupportedOperationError(`name a delegatee in message.metadata["${DELEGATEE_METADATA}"], or use /agents/<id>/`);
    return id;
  }

  async sendMessage(params: Parameters<A2ARequestHandler['sendMessage']>[0], ctx: ServerCallContext): Promise<Message | Task> {
    const { caller, raw } = this.factsOf(ctx);
    const delegatee = this.delegateeOf(raw);
    this.refuseUnsupportedPush(params, raw);
    const result = await this.guard(() => this.dispatcher.send(caller, delegatee, raw ?? (SendMessageRequestJson(params) as Json)));
    const decoded = SendMessageResponse.fromJSON(result).payload;
    if (!decoded) throw new UnsupportedOperationError('delegatee returned neither task nor message');
    return decoded.value;
  }

  async *sendMessageStream(params: Parameters<A2ARequestHandler['sendMessageStream']>[0], ctx: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const { caller, raw } = this.factsOf(ctx);
    this.refuseUnsupportedPush(params, raw);
    const events = this.dispatcher.stream(caller, this.delegateeOf(raw), raw ?? (SendMessageRequestJson(params) as Json));
    try {
      for await (const ev of events) yield StreamResponse.fromJSON(ev);
    } catch (err) {
      throw toA2AError(err, this.binding);
    }
  }

  async getTask(params: Parameters<A2ARequestHandler['getTask']>[0], ctx: ServerCallContext): Promise<Task> {
    const { caller } = this.factsOf(ctx);
    return Task.fromJSON(await this.guard(() => this.dispatcher.getTask(caller, params.id, params.historyLength)));
  }

  async cancelTask(params: Parameters<A2ARequestHandler['cancelTask']>[0], ctx: ServerCallContext): Promise<Task> {
    const { caller } = this.factsOf(ctx);
    return Task.fromJSON(await this.guard(() => this.dispatcher.cancel(caller, params.id)));
  }

  async listTasks(params: Parameters<A2ARequestHandler['listTasks']>[0], ctx: ServerCallContext): Promise<ListTasksResponse> {
    const { caller } = this.factsOf(ctx);
    const page = await this.guard(() =>
      this.dispatcher.listTasks(caller, this.opts.delegatee, { pageSize: params.pageSize, pageToken: params.pageToken, contextId: params.contextId || undefined }),
    );
    return ListTasksResponse.fromJSON(page);
  }

  async *resubscribe(params: Parameters<A2ARequestHandler['resubscribe']>[0], ctx: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const { caller, callerLeft } = this.factsOf(ctx);
    await this.refuseTerminal(caller, params.id);
    try {
      for await (const ev of this.dispatcher.resubscribe(caller, params.id, callerLeft?.())) yield StreamResponse.fromJSON(ev);
    } catch (err) {
      throw toA2AError(err, this.binding);
    }
  }

  /**
   * Push configs are Baton's: stored against Baton's task id for the caller
   * that owns the task, and delivered by Baton from verified outcomes only.
   * The delegatee is asked to notify Baton's own webhook instead.
   */
  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, ctx: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const { caller } = this.factsOf(ctx);
    const push = this.pushOrRefuse();
    return this.guard(async () => {
      const attempt = await this.ownAttempt(caller, params.taskId);
      const created = await push.create(caller, attempt, params);
      await this.dispatcher.subscribePush(attempt).catch(() => false); // best effort: the outbox poll covers a refusal
      return TaskPushNotificationConfig.fromJSON(created);
    });
  }

  async getTaskPushNotificationConfig(params: Parameters<A2ARequestHandler['getTaskPushNotificationConfig']>[0], ctx: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const { caller } = this.factsOf(ctx);
    const push = this.pushOrRefuse();
    return this.guard(async () => {
      const found = await push.get(await this.ownAttempt(caller, params.taskId), params.id);
      // As the SDK's reference handler: an unknown config is TaskNotFoundError.
      if (!found) throw new TaskNotFoundError('push notification config not found');
      return TaskPushNotificationConfig.fromJSON(found);
    });
  }

  async listTaskPushNotificationConfigs(params: Parameters<A2ARequestHandler['listTaskPushNotificationConfigs']>[0], ctx: ServerCallContext) {
    const { caller } = this.factsOf(ctx);
    const push = this.pushOrRefuse();
    return this.guard(async () => {
      const configs = await push.list(await this.ownAttempt(caller, params.taskId));
      return { configs: configs.map((c) => TaskPushNotificationConfig.fromJSON(c)), nextPageToken: '' };
    });
  }

  async deleteTaskPushNotificationConfig(params: Parameters<A2ARequestHandler['deleteTaskPushNotificationConfig']>[0], ctx: ServerCallContext): Promise<void> {
    const { caller } = this.factsOf(ctx);
    const push = this.pushOrRefuse();
    await this.guard(async () => {
      // Idempotent, as the SDK's reference handler: deleting a config that is not there (any more) succeeds.
      await push.delete(await this.ownAttempt(caller, params.taskId), params.id);
    });
  }

  /** A send asking for push notifications while push is disabled is refused before anything is admitted. */
  private refuseUnsupportedPush(params: SendMessageRequest, raw: Json | undefined): void {
    if (this.opts.push) return;
    const requested = raw ? (raw.configuration as Json | undefined)?.taskPushNotificationConfig : params.configuration?.taskPushNotificationConfig;
    if (requested !== undefined && requested !== null) throw new PushNotificationNotSupportedError('push notifications are not enabled on this gateway');
  }

  /**
   * A2A §3.1.6: subscribing to a task in a terminal state is
   * UnsupportedOperationError. Terminal as the caller sees it: a closed
   * attempt whose projected outcome shows as COMPLETED, FAILED or CANCELED
   * (an unverified one is still WORKING and may be watched).
   */
  private async refuseTerminal(caller: Caller, taskId: string): Promise<void> {
    const attempt = await this.guard(() => this.dispatcher.attemptFor(caller, taskId));
    if (!attempt || attempt.body.state !== 'closed') return;
    const shown = stateForOutcome(attempt.body.outcome);
    if (shown !== undefined && TERMINAL.has(shown)) throw new UnsupportedOperationError('the task is in a terminal state; there is nothing to subscribe to');
  }

  private pushOrRefuse(): PushRegistry {
    if (!this.opts.push) throw new PushNotificationNotSupportedError('push notifications are not enabled on this gateway');
    return this.opts.push;
  }

  private async ownAttempt(caller: Caller, taskId: string): Promise<Attempt> {
    const attempt = await this.dispatcher.attemptFor(caller, taskId);
    if (!attempt) throw new TaskNotFound(taskId);
    return attempt;
  }

  /** Runs `fn`; anything it throws leaves as the A2A error of this handler's binding. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toA2AError(err, this.binding);
    }
  }

  private factsOf(ctx: ServerCallContext): RequestFacts {
    // A2A §3.2: echo the extensions we honour. Baton always attaches the contract
    // chain downstream; it activates the extension for callers that ask for it.
    if (ctx.requestedExtensions?.includes(CONTRACT_EXTENSION)) ctx.addActivatedExtension(CONTRACT_EXTENSION);
    const headers = ctx.state.get('headers') as object | undefined;
    const facts = headers && this.facts.get(headers);
    // The auth middleware runs first on every route; reaching here without facts is a wiring bug.
    if (!facts) throw new RequestMalformedError('request was not authenticated by the gateway');
    return facts;
  }
}

const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

/** Fallback only: the raw body is preferred, so fields the SDK's codec drops survive forwarding. */
const SendMessageRequestJson = (params: SendMessageRequest): unknown => SendMessageRequest.toJSON(params);
