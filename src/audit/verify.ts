/**
 * `baton audit verify`'s rules (RW-003 §1 immutable records, §1.2 hash-chained
 * control streams), with no I/O: rows go in as the store holds them, breaks
 * come out. The verifier re-derives everything from the stored bytes — it
 * parses each document strictly, insists the bytes are the canonical form the
 * digest covers, recomputes the digest, and re-links every chain — and never
 * trusts a column it can recompute.
 *
 * Rows must arrive grouped: a record's revisions together in seq order, a
 * stream's events together in position order (AuditReads scans do this), so
 * only the chain being walked is held in memory.
 *
 * One module (~340 lines) on purpose: the record and stream walks share the
 * strict re-derivation of bytes and digests that makes the verdict trustworthy.
 */
import { ControlEvent, eventDigest } from '../control/event.ts';
import { streamOf, type ScopeKind } from '../control/scope.ts';
import { assertPlacement, nextState, type AuthorityState } from '../control/state.ts';
import { isBatonError } from '../errors.ts';
import { canonicalText } from '../records/canonical.ts';
import { digestOf } from '../records/digest.ts';
import { computeContentDigest, Envelope, summariseIssues } from '../records/envelope.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import type { AuditControlHeadRow, AuditEventRow, AuditRecordHeadRow, AuditRecordRow } from '../store/port.ts';
import type { AuditBreak, AuditEventInput, AuditReport, AuditWhere, BreakKind, VerifierOptions } from './report.ts';

export { BREAK_KINDS, type AuditBreak, type AuditEventInput, type AuditReport, type AuditWhere, type BreakKind, type VerifierOptions } from './report.ts';

/** Generous bounds: a stored document was canonicalised (depth ≤ 128) and must not be refused for size alone. */
const STORED_JSON = { maxBytes: 64 * 1024 * 1024, maxDepth: 256 };

/** The fields appendControl assigns; the rest of an event is its parsed input, whose digest is input_digest. */
const ASSIGNED = ['event_id', 'event_schema_ref', 'project_id', 'branch_id', 'position', 'recorded_at', 'prev_event_digest', 'event_digest'];

interface Chain {
  record_id: string;
  last: { seq: bigint; revision_id: string; content_digest: string };
  head: string | null;
}

interface Stream {
  project_id: string;
  branch_id: string;
  last: { position: bigint; event_id: string; event_digest: string };
  head: { position: bigint | null; event_id: string | null; event_digest: string | null; state?: string | null; scope_kind?: string | null };
  fold: Fold;
}

/** The stream's projected state so far, folded from 'unresolved' as appendControl does. */
interface Fold {
  /** From the first event whose control_scope_ref addresses the stream. */
  kind: ScopeKind | undefined;
  state: AuthorityState;
  /** False once an event could not be read: the fold is then unknown and the head's state is not judged on it. */
  complete: boolean;
}

const UNFOLDED: Fold = { kind: undefined, state: 'unresolved', complete: true };

type Doc = { [key: string]: JsonValue };

export class AuditVerifier {
  private readonly maxBreaks: number;
  private readonly breaks: AuditBreak[] = [];
  private count = 0;
  private records = 0;
  private recordHeads = 0;
  private events = 0;
  private streams = 0;
  private controlHeads = 0;
  private headStates = 0;
  private chain: Chain | undefined;
  private stream: Stream | undefined;

  constructor(opts: VerifierOptions = {}) {
    this.maxBreaks = Math.max(0, opts.maxBreaks ?? 1000);
  }

  /** One `records` row; a record's revisions consecutively, oldest first. */
  record(row: AuditRecordRow): void {
    if (this.chain && this.chain.record_id !== row.record_id) this.closeChain();
    this.records++;
    const where = { seq: String(row.seq), record_id: row.record_id, revision_id: row.revision_id };
    const doc = this.parse(row.document, 'record', where);
    // A revision is linked by what its document says; the columns only stand in for an unreadable one,
    // so a tampered column is one break (column or digest mismatch) rather than a cascade down the chain.
    let prior: { revision_id?: unknown; object_id?: unknown; content_digest?: unknown } | null = row.prior_revision === null ? null : { revision_id: row.prior_revision };
    let self = { revision_id: row.revision_id, content_digest: row.content_digest };
    if (doc) {
      const shape = Envelope.safeParse(doc);
      if (!shape.success) {
        this.add('record_unparseable', where, `not a record envelope: ${issues(shape.error)}`);
      } else {
        this.checkRecordDoc(row, doc, shape.data, where);
        prior = shape.data.prior_revision_ref ?? null;
        self = { revision_id: shape.data.revision_id, content_digest: shape.data.content_digest };
      }
    }
    const previous = this.chain?.last;
    if (!previous) {
      if (prior !== null) this.add('record_chain_break', where, `the first stored revision names a prior revision ${String(prior.revision_id)}`);
    } else if (prior === null) {
      this.add('record_chain_break', where, `names no prior revision; the one before it is ${previous.revision_id} (seq ${previous.seq})`);
    } else {
      const wrong = [
        ...(prior.revision_id !== previous.revision_id ? [`revision ${String(prior.revision_id)}`] : []),
        ...(prior.object_id !== undefined && prior.object_id !== row.record_id ? [`object ${String(prior.object_id)}`] : []),
        ...(prior.content_digest !== undefined && prior.content_digest !== previous.content_digest ? [`digest ${String(prior.content_digest)}`] : []),
      ];
      if (wrong.length > 0) {
        this.add(
          'record_chain_break',
          where,
          `prior revision names ${wrong.join(', ')}; the one before it is ${previous.revision_id} ${previous.content_digest} (seq ${previous.seq})`,
        );
      }
    }
    this.chain = { record_id: row.record_id, last: { seq: row.seq, ...self }, head: row.head_revision_id };
  }

  /** One `control_events` row; a stream's events consecutively, by position. */
  event(row: AuditEventInput): void {
    if (this.stream && (this.stream.project_id !== row.project_id || this.stream.branch_id !== row.branch_id)) this.closeStream();
    if (!this.stream) this.streams++;
    this.events++;
    const where = { project_id: row.project_id, branch_id: row.branch_id, position: String(row.position), event_id: row.event_id };
    const previous = this.stream?.last;
    const expected = previous ? previous.position + 1n : 1n;
    const gap = row.position !== expected;
    if (gap) this.add('event_position_gap', where, `expected position ${expected}, found ${row.position}${previous ? ` after ${previous.event_id}` : ''}`);
    const doc = this.parse(row.document, 'event', where);
    let self = { event_id: row.event_id, event_digest: row.event_digest }; // as for records: the document's, when readable
    let fold: Fold = { ...{}, ...(this.stream?.fold ?? UNFOLDED), complete: false };
    if (doc) {
      const shape = ControlEvent.safeParse(doc);
      if (!shape.success) {
        this.add('event_unparseable', where, `not a control event: ${issues(shape.error)}`);
      } else {
        this.checkEventDoc(row, doc, where);
        self = { event_id: shape.data.event_id, event_digest: shape.data.event_digest };
        // Across a gap the link cannot match; the gap is the break.
        const link = previous?.event_digest ?? null;
        if (!gap && shape.data.prev_event_digest !== link) {
          this.add('event_chain_break', where, `prev_event_digest is ${shape.data.prev_event_digest ?? 'null'}; ${previous ? `the previous event's digest is ${link}` : 'the first event must have null'}`);
        }
        fold = this.fold(this.stream?.fold ?? UNFOLDED, shape.data, where);
      }
    }
    this.stream = {
      project_id: row.project_id,
      branch_id: row.branch_id,
      last: { position: row.position, ...self },
      head: { position: row.head_position, event_id: row.head_event_id, event_digest: row.head_event_digest, state: row.head_state, scope_kind: row.head_scope_kind },
      fold,
    };
  }

  /** One `record_heads` row; the record side checks heads against chains, this catches heads with no chain. */
  recordHead(row: AuditRecordHeadRow): void {
    this.recordHeads++;
    if (row.last_seq === null) {
      this.add('record_head_dangling', { record_id: row.record_id, revision_id: row.revision_id }, `head names revision ${row.revision_id} but the record has no stored revision`);
    }
  }

  /** One `control_heads` row; the event side checks heads against streams, this catches heads with no stream. */
  controlHead(row: AuditControlHeadRow): void {
    this.controlHeads++;
    if (row.last_position === null) {
      this.add(
        'control_head_dangling',
        { project_id: row.project_id, branch_id: row.branch_id, position: String(row.position), event_id: row.event_id },
        `head names position ${row.position} (${row.event_id}) but the stream has no stored event`,
      );
    }
  }

  /** Closes the chain and stream in progress and reports. */
  finish(): AuditReport {
    this.closeChain();
    this.closeStream();
    return {
      records_checked: this.records,
      record_heads_checked: this.recordHeads,
      events_checked: this.events,
      streams_checked: this.streams,
      control_heads_checked: this.controlHeads,
      head_states_checked: this.headStates,
      break_count: this.count,
      breaks: [...this.breaks],
    };
  }

  private checkRecordDoc(row: AuditRecordRow, doc: Doc, env: Envelope, where: AuditWhere): void {
    const recomputed = attempt(() => computeContentDigest(doc));
    if (recomputed !== row.content_digest || env.content_digest !== row.content_digest) {
      this.add('record_digest_mismatch', where, `recomputed ${recomputed ?? '(none)'}; column ${row.content_digest}; document ${env.content_digest}`);
    }
    const columns = differing([
      ['record_id', row.record_id, env.record_id],
      ['revision_id', row.revision_id, env.revision_id],
      ['schema_ref', row.schema_ref, env.schema_ref],
      ['prior_revision', row.prior_revision, env.prior_revision_ref?.revision_id ?? null],
    ]);
    if (columns) this.add('record_column_mismatch', where, columns);
  }

  private checkEventDoc(row: AuditEventRow, doc: Doc, where: AuditWhere): void {
    const recomputed = attempt(() => eventDigest(doc as unknown as ControlEvent));
    if (recomputed !== row.event_digest || doc.event_digest !== row.event_digest) {
      this.add('event_digest_mismatch', where, `recomputed ${recomputed ?? '(none)'}; column ${row.event_digest}; document ${String(doc.event_digest)}`);
    }
    const input = Object.fromEntries(Object.entries(doc).filter(([k]) => !ASSIGNED.includes(k)));
    const columns = differing([
      ['project_id', row.project_id, doc.project_id],
      ['branch_id', row.branch_id, doc.branch_id],
      ['position', row.position, typeof doc.position === 'number' ? BigInt(doc.position) : doc.position],
      ['event_id', row.event_id, doc.event_id],
      ['event_type', row.event_type, doc.event_type],
      ['idempotency_key', row.idempotency_key, doc.idempotency_key ?? null],
      ['input_digest', row.input_digest, attempt(() => digestOf(input))],
    ]);
    if (columns) this.add('event_column_mismatch', where, columns);
  }

  /**
   * One step of the projection, by the append path's own rules (assertPlacement,
   * nextState). An event those rules refuse is a break and leaves the state as it was.
   */
  private fold(f: Fold, e: ControlEvent, where: AuditWhere): Fold {
    const ref = e.control_scope_ref;
    const addressed = streamOf(ref);
    if (addressed.project_id !== e.project_id || addressed.branch_id !== e.branch_id) {
      this.add('event_state_invalid', where, `control_scope_ref addresses ${addressed.project_id} ${addressed.branch_id}, not the event's stream`);
      return f;
    }
    // The branch is <scope_kind>:<scope_id>, so every event addressing the stream names the same kind.
    const kind = f.kind ?? ref.scope_kind;
    try {
      assertPlacement(ref.scope_kind, e.event_type);
      return { ...{}, ...f, kind, state: nextState(ref.scope_kind, f.state, e.event_type, e.payload) };
    } catch (err) {
      if (!isBatonError(err, 'invalid_request')) throw err;
      this.add('event_state_invalid', where, `${e.event_type} on a ${ref.scope_kind} stream in state ${f.state}: ${err.message}; the fold keeps ${f.state}`);
      return { ...{}, ...f, kind };
    }
  }

  /** Strict JSON object in exactly its canonical text, or a reported break. */
  private parse(text: string, what: 'record' | 'event', where: AuditWhere): Doc | undefined {
    let value: JsonValue;
    try {
      value = parseStrictJson(text, STORED_JSON);
    } catch (err) {
      this.add(`${what}_unparseable`, where, `stored document is not strict JSON: ${(err as Error).message}`);
      return undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.add(`${what}_unparseable`, where, 'stored document is not a JSON object');
      return undefined;
    }
    const canonical = attempt(() => canonicalText(value));
    if (canonical !== text) this.add(`${what}_not_canonical`, where, `stored bytes (${Buffer.byteLength(text)} B) are not the canonical text the digest covers`);
    return value;
  }

  private closeChain(): void {
    const c = this.chain;
    this.chain = undefined;
    if (!c || c.head === c.last.revision_id) return;
    this.add(
      'record_head_mismatch',
      { seq: String(c.last.seq), record_id: c.record_id, revision_id: c.last.revision_id },
      c.head === null ? `record has no head; its last revision is ${c.last.revision_id}` : `head names ${c.head}; the last revision is ${c.last.revision_id}`,
    );
  }

  private closeStream(): void {
    const s = this.stream;
    this.stream = undefined;
    if (!s) return;
    const where = { project_id: s.project_id, branch_id: s.branch_id, position: String(s.last.position), event_id: s.last.event_id };
    if (s.head.position === null) {
      this.add('control_head_mismatch', where, `stream has no head; its last event is ${s.last.event_id} at position ${s.last.position}`);
      return;
    }
    const wrong = differing([
      ['position', s.head.position, s.last.position],
      ['event_id', s.head.event_id, s.last.event_id],
      ['event_digest', s.head.event_digest, s.last.event_digest],
    ]);
    // A head that names another event projects that event's state; the misplaced head is the break.
    if (wrong) this.add('control_head_mismatch', where, `head does not name the last event: ${wrong}`);
    else this.checkHeadState(s);
  }

  /** The head's projected columns against the fold; only when both are known (an unreadable event or a missing column was reported or is counted). */
  private checkHeadState(s: Stream): void {
    const { state, scope_kind } = s.head;
    if (state === undefined || state === null || scope_kind === undefined || scope_kind === null || !s.fold.complete) return;
    this.headStates++;
    const wrong = [
      ...(state !== s.fold.state ? [`state: stored ${state}, recomputed ${s.fold.state}`] : []),
      ...(s.fold.kind !== undefined && scope_kind !== s.fold.kind ? [`scope_kind: stored ${scope_kind}, recomputed ${s.fold.kind}`] : []),
    ];
    if (wrong.length > 0) this.add('head_state_mismatch', { project_id: s.project_id, branch_id: s.branch_id }, wrong.join('; '));
  }

  /** A break found by a companion check (e.g. audit/content.ts), counted in this report. */
  note(b: AuditBreak): void {
    this.add(b.kind, b.where, b.detail);
  }

  private add(kind: BreakKind, where: AuditWhere, detail: string): void {
    this.count++;
    if (this.breaks.length < this.maxBreaks) this.breaks.push({ kind, where, detail });
  }
}

/** `name stored X, document Y` for each pair that differs, or undefined when all agree. */
function differing(pairs: ReadonlyArray<readonly [string, unknown, unknown]>): string | undefined {
  const wrong = pairs.filter(([, a, b]) => a !== b).map(([name, a, b]) => `${name}: stored ${show(a)}, document ${show(b)}`);
  return wrong.length > 0 ? wrong.join('; ') : undefined;
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : typeof v === 'string' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
}

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function issues(error: Parameters<typeof summariseIssues>[0]): string {
  return summariseIssues(error)
    .slice(0, 5)
    .map((i) => `${i.path || '(root)'}: ${i.message}`)
    .join('; ');
}
