/**
 * Step 5: forward the admitted turn. Non-blocking upstream (DESIGN "Forward
 * non-blocking upstream, block at Baton"): a stream where the delegatee's
 * card offers one, otherwise SendMessage with `returnImmediately`, so Baton
 * learns the remote task id before the agent finishes and can always cancel
 * and read back. The caller's validated message is forwarded as received,
 * with Baton's remote context, and the signed contract chain is attached
 * where the delegatee takes it (../chain-placement.ts: the request's
 * metadata, or for a gateway from before that, the message's). The caller's
 * request-level `metadata` is its word to Baton, not Baton's to pass on: it is
 * never forwarded (a chain forged there must not reach a delegatee that reads
 * one, issue #25 item 19); the request's metadata sent is Baton's own.
 */
import type { JsonValue } from '../../records/strict-json.ts';
import { CONTRACT_EXTENSION } from '../present.ts';
import type { AdmittedTurn } from './admit.ts';
import { classify, type RemoteResult } from './classify.ts';
import type { PathDeps } from './deps.ts';
import type { Json, Turn } from './turn.ts';
import { failed, inSpan, turnIds } from '../../telemetry/tracing.ts';

export type Forwarded =
  | { kind: 'stream'; body: AsyncIterable<Uint8Array> }
  /** The SendMessageResponse (`{task}` or `{message}`). */
  | { kind: 'reply'; result: Json }
  | { kind: 'failed'; result: RemoteResult; error: unknown };

/** The params the delegatee receives for this turn. */
export function wireParams(deps: Pick<PathDeps, 'push'>, turn: AdmittedTurn, params: Json, streaming: boolean): Json {
  const message = params.message as Json;
  const { [CONTRACT_EXTENSION]: _presented, ...metadata } = (message.metadata as Json | undefined) ?? {};
  const remote = turn.attempt.body.remote;
  const { taskPushNotificationConfig: _integrators, returnImmediately: _wait, ...configuration } = (params.configuration as Json | undefined) ?? {};
  // An integrator's webhook is Baton's to serve: the delegatee is asked to notify Baton's own instead (only then).
  const own: Json = _integrators != null && deps.push && turn.target.pushNotifications ? { taskPushNotificationConfig: deps.push.inbound(turn.attempt.record_id) as unknown as JsonValue } : {};
  const { metadata: _request, ...rest } = params;
  const chain: Json = { [CONTRACT_EXTENSION]: { chain: turn.contracts as unknown as JsonValue } };
  const inMessage = turn.target.chainPlacement === 'message';
  const { metadata: _caller, ...sent } = message;
  return {
    ...{}, ...rest,
    message: {
      ...{}, ...sent,
      ...(turn.remoteTaskId ? { taskId: turn.remoteTaskId } : {}),
      ...(remote.context_id ? { contextId: remote.context_id } : {}),
      ...(inMessage ? { metadata: { ...{}, ...metadata, ...chain } } : Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
    configuration: { ...{}, ...configuration, ...(streaming ? {} : { returnImmediately: true }), ...own } as Json,
    // The request's metadata is Baton's to the delegatee; the caller's to Baton never travels.
    ...(inMessage ? {} : { metadata: chain }),
  };
}

export async function forward(deps: Pick<PathDeps, 'remote' | 'events'>, turn: Turn, params: Json, streaming: boolean): Promise<Forwarded> {
  // The contract extension is activated in the delegatee's headers, on every call (delegatees.ts credentialsOf).
  const headers = turn.target.headers;
  const started = performance.now();
  const done = (ok: boolean) => deps.events.emit({ type: 'upstream', call: 'send', delegatee: turn.attempt.body.delegatee_id, seconds: (performance.now() - started) / 1000, ok });
  // The span is the delegatee's parent: the remote client propagates the active trace context (W3C traceparent).
  return inSpan('baton.forward', { ...{}, ...turnIds(turn), 'baton.streaming': streaming }, async (span) => {
    try {
      const sent: Forwarded = streaming
        ? { kind: 'stream', body: (await deps.remote.stream(turn.target.endpoint, 'SendStreamingMessage', params, headers)).body }
        : { kind: 'reply', result: (await deps.remote.call(turn.target.endpoint, 'SendMessage', params, { headers })) as Json };
      // A stream's time is to its response headers: the events that follow are the agent's working time, not the call's.
      await done(true);
      return sent;
    } catch (err) {
      await done(false);
      const result = classify(err);
      failed(span, err);
      span.setAttribute('baton.remote_result', result.kind);
      return { kind: 'failed', result, error: err };
    }
  });
}
