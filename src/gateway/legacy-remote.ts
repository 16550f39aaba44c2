/**
 * Talking A2A v0.3 to a delegatee whose card offers only v0.3, through the
 * SDK's compatibility layer (LegacyJsonRpcTransport: `message/send`, `kind`
 * discriminators, lowercase states) while the dispatcher keeps working on
 * v1.0 wire JSON. The transport only translates: every byte still goes
 * through Baton's RemoteClient — its pools (read-backs on their own),
 * deadlines, size bounds and its classification of failures into
 * not-transmitted / lost, which outcome projection depends on.
 *
 * A call is v0.3 when the delegatee registry marked its headers with
 * `A2A-Version: 0.3` (A2A §3.6.1), so one client serves both versions.
 */
import { CancelTaskRequest, GetTaskRequest, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { BatonError } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { RemoteClient, RemoteFailure, RemoteRpcError, type StreamOptions } from './remote.ts';
import { parseSse, type SseEvent } from './sse.ts';
import { parseEnvelope } from './wire.ts';

type CallOptions = Parameters<RemoteClient['call']>[3];

/** The header value that routes a call through the v0.3 layer. */
export const LEGACY_VERSION = '0.3';

const isLegacy = (headers: Record<string, string> | undefined) => headers?.['a2a-version'] === LEGACY_VERSION;

export class VersionedRemoteClient extends RemoteClient {
  override async call(url: string, method: string, params: unknown, opts: CallOptions = {}): Promise<JsonValue> {
    if (!isLegacy(opts.headers)) return super.call(url, method, params, opts);
    const t = this.transport(url, opts.headers ?? {}, opts.readBack === true);
    return legacyErrors(async () => {
      switch (method) {
        case 'SendMessage': {
          const r = await t.sendMessage(SendMessageRequest.fromJSON(params));
          return ('role' in r ? { message: Message.toJSON(r as Message) } : { task: Task.toJSON(r as Task) }) as JsonValue;
        }
        case 'GetTask':
          return Task.toJSON(await t.getTask(GetTaskRequest.fromJSON(params))) as JsonValue;
        case 'CancelTask':
          return Task.toJSON(await t.cancelTask(CancelTaskRequest.fromJSON(params))) as JsonValue;
        case 'CreateTaskPushNotificationConfig':
          return TaskPushNotificationConfig.toJSON(await t.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(params))) as JsonValue;
        default:
          // ListTasks and every other v1.0-only method: v0.3 has no equivalent (JSON-RPC method not found).
          throw new RemoteRpcError(-32601, `${method} has no A2A v0.3 equivalent`);
      }
    });
  }

  override async stream(url: string, method: string, params: unknown, headers: Record<string, string> = {}, opts: StreamOptions = {}): Promise<Dispatcher.ResponseData> {
    if (!isLegacy(headers)) return super.stream(url, method, params, headers, opts);
    const t = this.transport(url, headers, false, opts);
    const events =
      method === 'SendStreamingMessage'
        ? t.sendMessageStream(SendMessageRequest.fromJSON(params))
        : method === 'SubscribeToTask'
          ? t.resubscribeTask(SubscribeToTaskRequest.fromJSON(params))
          : undefined;
    if (!events) throw new RemoteRpcError(-32601, `${method} has no A2A v0.3 equivalent`);
    // The first event decides between a stream and a refusal, as RemoteClient.stream does (A2A §9.4.2).
    const it = events[Symbol.asyncIterator]();
    const first = await legacyErrors(() => it.next());
    // Events are handed on framed (src/gateway/sse.ts): the envelope with the text it counts as, never written out to be read back.
    async function* sse(): AsyncGenerator<SseEvent> {
      const encode = (ev: StreamResponse): SseEvent => {
        const envelope = { jsonrpc: '2.0', id: method, result: StreamResponse.toJSON(ev) as JsonValue };
        return { event: 'message', data: JSON.stringify(envelope), envelope };
      };
      if (!first.done) yield encode(first.value);
      for (let next = await legacyErrors(() => it.next()); !next.done; next = await legacyErrors(() => it.next())) yield encode(next.value);
    }
    return { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body: Readable.from(sse()) } as unknown as Dispatcher.ResponseData;
  }

  /**
   * A v0.3 transport whose every request is sent by this client: the
   * transport builds the v0.3 envelope, RemoteClient sends it, and the
   * result is handed back to the transport to translate.
   */
  private transport(url: string, headers: Record<string, string>, readBack: boolean, streams: StreamOptions = {}): LegacyJsonRpcTransport {
    // v0.3 names the extensions header X-A2A-Extensions.
    const h: Record<string, string> = { ...{}, ...headers, ...(headers['a2a-extensions'] ? { 'x-a2a-extensions': headers['a2a-extensions'] } : {}) };
    const fetchImpl = async (_input: unknown, init?: { body?: unknown; headers?: unknown }): Promise<Response> => {
      const env = JSON.parse(String(init?.body)) as { id: number | string; method: string; params: unknown };
      const accept = String((init?.headers as Record<string, string> | undefined)?.Accept ?? '');
      if (accept === 'text/event-stream') {
        const res = await super.stream(url, env.method, env.params, h, streams);
        return new Response(Readable.toWeb(Readable.from(rewriteIds(res.body, env.id))) as ReadableStream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      }
      const result = await super.call(url, env.method, env.params, { headers: h, readBack, id: String(env.id) });
      // The transport reads only `ok` and `json()` of a success: it gets the envelope RemoteClient already read strictly, not its text to parse again.
      return { ok: true, status: 200, json: async () => ({ jsonrpc: '2.0', id: env.id, result }) } as unknown as Response;
    };
    return new LegacyJsonRpcTransport({ endpoint: url, fetchImpl: fetchImpl as unknown as typeof fetch });
  }
}

/** RemoteClient names a stream's JSON-RPC id after the method; the v0.3 transport checks its own. */
async function* rewriteIds(body: AsyncIterable<Uint8Array>, id: number | string): AsyncGenerator<Uint8Array> {
  for await (const ev of parseSse(body)) {
    const env = parseEnvelope(ev.data); // strict, as every byte a delegatee sends
    yield Buffer.from(`${ev.event !== 'message' ? `event: ${ev.event}\n` : ''}data: ${JSON.stringify({ ...{}, ...env, id })}\n\n`);
  }
}

/**
 * Errors out of the v0.3 transport in the dispatcher's vocabulary: Baton's
 * own failures pass through untouched (they carry the transmitted/lost
 * classification); an A2A error the delegatee answered with keeps its code;
 * anything the transport itself rejects is a malformed answer, delivered.
 */
async function legacyErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RemoteFailure || err instanceof RemoteRpcError || err instanceof BatonError) throw err;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof RemoteFailure || cause instanceof RemoteRpcError) throw cause;
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') throw new RemoteRpcError(code, err instanceof Error ? err.message.slice(0, 500) : 'remote error');
    // The translator's text may quote the delegatee's answer: it stays in `cause`, never in the reason a caller can see.
    throw new RemoteFailure(true, 'delegatee answered outside A2A v0.3', { cause: err });
  }
}
