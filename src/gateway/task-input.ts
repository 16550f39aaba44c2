/**
 * The exact input of an attempt (RW-003 §7.1 "inputs", §7.2 "exact input
 * revisions"): the caller's message as forwarded, without the contract chain
 * Baton attaches. Stored with the attempt in its admission transaction, so a
 * resumed or reassigned attempt sends exactly these bytes and can prove it.
 */
import { canonicalBytes } from '../records/canonical.ts';
import { digestOf } from '../records/digest.ts';
import { sealRecord, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { RECORD_LIMITS } from '../records/limits.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Clock } from '../records/time.ts';
import type { TaskInputBody } from '../attempts/record.ts';
import { CONTRACT_EXTENSION } from './present.ts';

type Json = { [key: string]: JsonValue };

/** The message minus Baton's own metadata: what the input is, whichever hop attached a chain. */
export function inputMessage(message: Json): Json {
  const { [CONTRACT_EXTENSION]: _chain, ...metadata } = (message.metadata as Json | undefined) ?? {};
  const { metadata: _m, ...rest } = message;
  return Object.keys(metadata).length > 0 ? { ...rest, metadata } : rest;
}

export function taskInput(attemptId: string, message: Json, deps: { ids: IdSource; clock: Clock; gatewayActor: ActorRef }): SealedRecord<TaskInputBody> {
  const input = inputMessage(message);
  // Leave room for the envelope: a message near the record bound is fixed by digest only.
  const keep = canonicalBytes(input).byteLength <= RECORD_LIMITS.maxRecordBytes - 4096;
  return sealRecord<TaskInputBody>(
    { type: 'task_input', issuedBy: deps.gatewayActor, lifecycle: 'recorded', body: { attempt_id: attemptId, message: keep ? input : null, message_digest: digestOf(input) } },
    deps,
  );
}
