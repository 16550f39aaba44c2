/**
 * What `baton audit verify` reports (src/audit/verify.ts): the closed list of
 * break kinds, where a break is, and the report's counts.
 */
import type { AuditEventRow } from '../store/port.ts';

export const BREAK_KINDS = [
  /** Not strict JSON, or not a record envelope. */
  'record_unparseable',
  /** Parses, but the stored bytes are not the canonical (RFC 8785) text its digest covers. */
  'record_not_canonical',
  /** The recomputed content digest differs from the content_digest column or the document's own field. */
  'record_digest_mismatch',
  /** record_id, revision_id, schema_ref or prior_revision columns disagree with the document. */
  'record_column_mismatch',
  /** A first revision names a prior, or a later one does not name the revision before it. */
  'record_chain_break',
  /** A record's head is missing or is not its last revision. */
  'record_head_mismatch',
  /** A head for a record with no stored revision at all. */
  'record_head_dangling',
  'event_unparseable',
  'event_not_canonical',
  /** The recomputed event digest differs from the event_digest column or the document's own field. */
  'event_digest_mismatch',
  /** project_id, branch_id, position, event_id, event_type, idempotency_key or input_digest columns disagree with the document. */
  'event_column_mismatch',
  /** Positions within a stream are not consecutive from 1. */
  'event_position_gap',
  /** prev_event_digest is not the previous event's digest (null for the first). */
  'event_chain_break',
  /** A stream's head is missing or does not name its last event. */
  'control_head_mismatch',
  /** A head for a stream with no stored event at all. */
  'control_head_dangling',
  /**
   * An event the append path would have refused: it is placed on the wrong kind of
   * stream, its control_scope_ref does not address its stream, or nextState rejects
   * it (e.g. a reassignment naming no contract revision). The fold skips it.
   */
  'event_state_invalid',
  /** A head's state or scope_kind is not what folding its stream's events gives. */
  'head_state_mismatch',
  /** A record names content (by digest) that is not in the content store at all. */
  'content_missing',
  /** Stored content does not hash to the digest the records name it by. */
  'content_tampered',
  /** Content is gone, but no retention purge record (with a later cut-off) accounts for it. */
  'content_purge_unaccounted',
] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

/** Where a break is: the row's identifying columns (seq and position as decimal text, being 64-bit). */
export interface AuditWhere {
  seq?: string;
  record_id?: string;
  revision_id?: string;
  project_id?: string;
  branch_id?: string;
  position?: string;
  event_id?: string;
}

export interface AuditBreak {
  kind: BreakKind;
  where: AuditWhere;
  detail: string;
}

/**
 * A `control_events` row as the verifier takes it: the head's projected
 * columns ride along with head_position, from the same snapshot. They are
 * optional so that a scan which does not select them yet still audits the
 * chains; `head_states_checked` then stays below the number of streams.
 */
export type AuditEventInput = AuditEventRow & {
  /** control_heads.state of the row's stream (null when it has no head). */
  head_state?: string | null;
  /** control_heads.scope_kind of the row's stream (null when it has no head). */
  head_scope_kind?: string | null;
};

export interface AuditReport {
  records_checked: number;
  record_heads_checked: number;
  events_checked: number;
  streams_checked: number;
  control_heads_checked: number;
  /** Streams whose head state and scope_kind were compared with the fold of their events. */
  head_states_checked: number;
  /** Content rows (messages, task views) checked, and how many of them retention purged. */
  content_checked?: number;
  content_purged?: number;
  /** Every break found; `breaks` lists the first `maxBreaks` of them. */
  break_count: number;
  breaks: AuditBreak[];
}

export interface VerifierOptions {
  /** How many breaks to keep for the report; all are counted. Default 1000. */
  maxBreaks?: number;
}

