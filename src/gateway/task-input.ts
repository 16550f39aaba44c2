/**
 * The exact input of an attempt (RW-003 §7.1 "inputs", §7.2 "exact input
 * revisions"): the caller's message as forwarded, without the contract chain
 * Baton attaches. Stored with the attempt in its admission transaction, so a
 * resumed or reassigned attempt sends exactly these bytes and can prove it.
 */
import { detachedOf, ride } from '../records/detached.ts';
import type { ContentStore } from '../store/content-sql.ts';
import { sealRecord, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
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
  return Object.keys(metadata).length > 0 ? { ...{}, ...rest, metadata } : rest;
}

/**
 * The task_input record names the message by digest only; the message itself
 * is stored apart (records/detached.ts), in the same transaction, so retention
 * can purge it while the record and every chain through it stay valid.
 */
export function taskInput(attemptId: string, message: Json, deps: { ids: IdSource; clock: Clock; gatewayActor: ActorRef }): SealedRecord<TaskInputBody> {
  const input = inputMessage(message);
  const content = detachedOf('task_input', input);
  const record = sealRecord<TaskInputBody>(
    { type: 'task_input', issuedBy: deps.gatewayActor, lifecycle: 'recorded', body: { attempt_id: attemptId, message: null, message_digest: content.digest, content: 'apart' } },
    deps,
  );
  return ride(record, [content]);
}

/** What a task_input record's message is now: kept inline (older records), stored apart, purged by retention, or never kept. */
export type InputContent = { state: 'present'; message: Json } | { state: 'purged'; purged_at: string } | { state: 'absent' };

export async function inputContentOf(input: { body: { [k: string]: unknown } }, content: Pick<ContentStore, 'get'>): Promise<InputContent> {
  const b = input.body;
  if (b.message && typeof b.message === 'object') return { state: 'present', message: b.message as Json };
  if (b.content !== 'apart' || typeof b.message_digest !== 'string') return { state: 'absent' };
  const row = await content.get(b.message_digest);
  if (row?.document) return { state: 'present', message: JSON.parse(row.document) as Json };
  return row?.purged_at ? { state: 'purged', purged_at: row.purged_at } : { state: 'absent' };
}
