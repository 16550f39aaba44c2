/**
 * Schema identifiers. RW-003 §3: "An unsupported schema version fails closed
 * for consequential effects." Readers look a record's schema_ref up here and
 * refuse anything they do not know instead of guessing.
 */
import { z } from 'zod';
import { unsupported } from '../errors.ts';

export const SCHEMA_FAMILY = 'rw-agent-delegation/0.1.1';

/** Every record type this build can read, by its exact schema_ref. */
export const RECORD_TYPES = [
  'agent_card',
  'delegation_contract',
  'permission_decision',
  'execution_attempt',
  'delegation_checkpoint',
  'delegation_attestation',
  'verification_receipt',
  'control_event',
  'grant',
  'escalation',
  'task_input',
  'approval_request',
  'authority_decision',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/**
 * Baton's own record types, which RW-003 does not define: they live under
 * Baton's schema family so no RW-003 type is ever reinterpreted.
 */
export const BATON_SCHEMA_FAMILY = 'baton-records/0.1';
const BATON_TYPES: ReadonlySet<RecordType> = new Set(['escalation', 'task_input', 'approval_request', 'authority_decision']);

export const SchemaRef = z.string().min(1).max(256);
export type SchemaRef = z.infer<typeof SchemaRef>;

/** The exact schema_ref for a record type of this build's schema family. */
export function schemaRefFor(type: RecordType): SchemaRef {
  return `${BATON_TYPES.has(type) ? BATON_SCHEMA_FAMILY : SCHEMA_FAMILY}#${type}`;
}

const SUPPORTED = new Map<string, RecordType>(RECORD_TYPES.map((t) => [schemaRefFor(t), t]));

/** Resolves a schema_ref or fails closed with `unsupported`. */
export function recordTypeOf(schemaRef: string): RecordType {
  const type = SUPPORTED.get(schemaRef);
  if (type === undefined) throw unsupported('unsupported schema version', { schema_ref: schemaRef.slice(0, 256) });
  return type;
}
