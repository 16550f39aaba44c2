/**
 * Set-oriented writes inside one transaction program (issue #24, DESIGN "A
 * turn is a pure plan, then one commit"). A program queues the records,
 * control events, ledger journal rows and work rows it writes here and
 * flushes them at its end as one statement per table (on PostgreSQL one
 * statement in all), instead of a read-check-insert-upsert round per row.
 * The nodes it opens are written together before the first read that needs
 * them (writeNodes). What the program must read back before then — a head
 * it appended to, a node or balance it created — is answered from the batch.
 *
 * The rules are the single-row ones, unchanged: an event is chained onto its
 * stream's head by the same pure composer as appendControl
 * (src/control/append.ts composeEvent), and a record revision must name its
 * record's current head (src/records/put.ts). Duplicates the hot path never
 * produces (an idempotency key, a revision id reused) are refused by the
 * tables' constraints, and anything unusual about a record takes the
 * single-row path, which names the exact refusal.
 */
import { composeEvent, headOf, inputTexts } from '../../control/append.ts';
import type { StreamHead } from '../../control/fence.ts';
import type { ControlEvent, ParsedEventInput } from '../../control/event.ts';
import { streamKey, streamOf, type StreamId } from '../../control/scope.ts';
import type { Envelope } from '../../records/envelope.ts';
import type { IdSource } from '../../records/ids.ts';
import { checkedDocument, contentRowOf, putRecord, recordRowOf } from '../../records/put.ts';
import { ridersOf } from '../../records/detached.ts';
import { rememberStored } from '../../records/decode.ts';
import { tx, type BalanceRow, type BatchWrites, type EntryRow, type EventRow, type HeadRow, type Lock, type NodeRow, type Program, type RecordRow, type WorkRow } from './ops.ts';

export class TxBatch {
  /** Heads as they stand inside this transaction (null: the stream has no events yet). */
  private readonly heads = new Map<string, HeadRow | null>();
  /** Nodes this transaction read or created (null: absent), and the balances of those it created, as they stand. */
  readonly nodes = new Map<string, NodeRow | null>();
  readonly balances = new Map<string, BalanceRow[]>();
  /** Nodes this transaction created, in the order opened; those not yet written are `unwritten`. */
  private readonly created: NodeRow[] = [];
  private unwritten = 0;
  /** New roots written without their ledger_live_roots row yet (see {@link writeLive}). */
  private readonly liveless = new Set<string>();
  private readonly records: { record: Envelope; at: string }[] = [];
  private readonly events: EventRow[] = [];
  private readonly entries: EntryRow[] = [];
  private readonly work: WorkRow[] = [];
  private readonly done: string[] = [];
  /** Streams this batch appended to (their heads are written at flush). */
  private readonly moved = new Set<string>();

  constructor(private readonly ids: IdSource) {}

  /** Reads the nodes not yet known to this batch, in one statement (absent ones are remembered as absent). */
  *loadNodes(ids: readonly string[], lock: Lock): Program<void> {
    const missing = [...new Set(ids)].filter((id) => !this.nodes.has(id));
    if (missing.length === 0) return;
    const rows = yield* tx('nodes', missing, lock);
    for (const id of missing) this.nodes.set(id, null);
    for (const r of rows) this.nodes.set(r.node_id, r);
  }

  /** Reads the heads of `streams` not yet known to this batch, in one statement. */
  *load(streams: readonly StreamId[], lock: Lock): Program<void> {
    const missing = dedupe(streams.filter((s) => !this.heads.has(streamKey(s))));
    if (missing.length === 0) return;
    const rows = yield* tx('streamHeads', missing, lock);
    for (const s of missing) this.heads.set(streamKey(s), null);
    for (const r of rows) this.heads.set(streamKey(r), { ...r, position: Number(r.position) });
  }

  /** The heads of `streams` this batch knows, keyed by streamKey (absent streams left out). */
  known(streams: readonly StreamId[]): Map<string, StreamHead> {
    const out = new Map<string, StreamHead>();
    for (const s of streams) {
      const h = this.heads.get(streamKey(s));
      if (h) out.set(streamKey(s), headOf(h));
    }
    return out;
  }

  /** The head of `stream` in this transaction (read once, then kept as appends move it). */
  *head(stream: StreamId, lock: Lock): Program<HeadRow | undefined> {
    yield* this.load([stream], lock);
    return this.heads.get(streamKey(stream)) ?? undefined;
  }

  /** Appends a control event (RW-003 §1.2), with the event id a plan fixed if any; it is written at {@link flush}. */
  *append(parsed: ParsedEventInput, at: string, eventId?: string): Program<ControlEvent> {
    const stream = streamOf(parsed.control_scope_ref);
    const head = yield* this.head(stream, 'update');
    const { members, inputDigest } = inputTexts(parsed);
    const { event, row, headRow } = composeEvent(parsed, members, inputDigest, head, at, eventId === undefined ? this.ids : { next: () => eventId });
    this.events.push(row);
    this.heads.set(streamKey(stream), headRow);
    this.moved.add(streamKey(stream));
    return event;
  }

  /** Queues a record revision; it is checked against its head and written at {@link flush}. */
  put(record: Envelope, at: string): void {
    this.records.push({ record, at });
  }

  /** Journals balance changes (the rows were changed in the store: what this batch knew of them is dropped). */
  journal(rows: readonly EntryRow[]): void {
    for (const r of rows) this.balances.delete(r.node_id);
    this.entries.push(...rows);
  }

  /** Queues the work row of an admitted effect to be followed (work-sql.ts); it is written at {@link flush}. */
  follow(row: WorkRow): void {
    this.work.push(row);
  }

  /** Queues the end of an effect's follow-up (its work row is deleted at {@link flush}). */
  endFollow(effectId: string): void {
    this.done.push(effectId);
  }

  /** Queues a node this transaction opens, with its balances; both are written by {@link writeNodes}. */
  open(row: NodeRow, balances: BalanceRow[]): void {
    this.nodes.set(row.node_id, row);
    this.balances.set(row.node_id, balances);
    this.created.push(row);
    this.unwritten++;
  }

  /**
   * Writes the nodes opened since the last call, one statement per table (on
   * PostgreSQL one in all). Whatever reads ledger_nodes or ledger_balances in
   * this transaction calls this first, so no read misses a node this
   * transaction opened. A new root's live-root row waits for
   * {@link writeLive} or {@link refreshLive}.
   */
  *writeNodes(): Program<void> {
    if (this.unwritten === 0) return;
    const rows = this.created.slice(this.created.length - this.unwritten);
    this.unwritten = 0;
    yield* tx('insertNodes', rows, rows.flatMap((r) => this.balances.get(r.node_id) ?? []));
    for (const r of rows) if (r.parent_id === null) this.liveless.add(r.node_id);
  }

  /**
   * Writes every node this transaction opened and the live-root row of each
   * new root (capacity.ts: a new root is live until something under it is
   * admitted and resolved). Whatever reads ledger_live_roots calls this
   * first, except the retained count, which adds {@link retainedLiveless}.
   */
  *writeLive(): Program<void> {
    yield* this.writeNodes();
    for (const root of this.liveless) yield* tx('refreshLiveRoot', root, 'gained');
    this.liveless.clear();
  }

  /**
   * Recomputes a root's live-root row (TxOps.refreshLiveRoot). Unless it can
   * only have lost liveness, the row is inserted from the rule itself — which
   * also writes a new root's row still waiting, so that is not written twice
   * (issue #24); a waiting row is written by {@link writeLive} otherwise.
   */
  *refreshLive(rootId: string, change?: 'gained' | 'lost'): Program<void> {
    yield* this.writeNodes();
    yield* tx('refreshLiveRoot', rootId, change);
    if (change !== 'lost') this.liveless.delete(rootId);
  }

  /**
   * What the retained-records count (capacity.ts retainedSql) misses while
   * new roots have no live-root row: the nodes under them (the root's own
   * included) unexpired at `at`, for roots in `ownerNamespace`. A new root is
   * live (nothing was reserved under it), every node under it is one this
   * transaction opened, and none outlives its root (the root's expiry needs
   * no check of its own), so this is exactly what the rows would add.
   */
  retainedLiveless(ownerNamespace: string, at: string): number {
    const t = Date.parse(at);
    const roots = new Set([...this.liveless].filter((id) => this.nodes.get(id)?.owner_namespace === ownerNamespace));
    return this.created.filter((n) => roots.has(n.root_id) && Date.parse(n.not_after) > t).length;
  }

  /**
   * The descendants of a root this transaction created: only the children it
   * created too, as no other transaction can see the root before it commits
   * (undefined: not a root of this transaction's).
   */
  descendantsOfNew(rootId: string): number | undefined {
    if (!this.created.some((n) => n.node_id === rootId && n.parent_id === null)) return undefined;
    return this.created.filter((n) => n.root_id === rootId && n.parent_id !== null).length;
  }

  /** The balances of `nodeIds` when this transaction created every one of them and changed none yet (else undefined). */
  newBalances(nodeIds: readonly string[]): BalanceRow[] | undefined {
    const out: BalanceRow[] = [];
    for (const id of nodeIds) {
      const rows = this.created.some((n) => n.node_id === id) ? this.balances.get(id) : undefined;
      if (!rows) return undefined;
      out.push(...rows);
    }
    return out;
  }

  /** Writes everything queued: one statement per table (on PostgreSQL one statement in all, TxOps.writeBatch). */
  *flush(): Program<void> {
    yield* this.writeLive();
    const records = yield* this.recordWrites();
    // One row per stream: its head after the last event this batch appended.
    const heads = [...this.moved].map((k) => this.heads.get(k)!);
    this.moved.clear();
    yield* tx('writeBatch', { ...records, events: this.events.splice(0), heads, entries: this.entries.splice(0), work: this.work.splice(0), done: this.done.splice(0) });
  }

  /** The queued records that are plain next revisions, with their heads and content; any other takes the single-row path now. */
  private *recordWrites(): Program<Pick<BatchWrites, 'records' | 'recordHeads' | 'contents'>> {
    const rows: RecordRow[] = [];
    const heads = new Map<string, string>();
    const contents: ReturnType<typeof contentRowOf>[] = [];
    const queued = this.records.splice(0);
    if (queued.length === 0) return { records: rows, recordHeads: [], contents };
    const current = new Map((yield* tx('recordHeads', [...new Set(queued.map((q) => q.record.record_id))])).map((h) => [h.record_id, h]));
    for (const { record, at } of queued) {
      const document = checkedDocument(record);
      const head = current.get(record.record_id);
      const prior = record.prior_revision_ref;
      const fits = head === undefined ? !prior : prior?.revision_id === head.revision_id && prior.content_digest === head.content_digest;
      if (!fits) {
        // Not a plain next revision (a replay, a conflict, a bad prior): the single-row rules decide and name it.
        yield* putRecord(record, at);
        continue;
      }
      rows.push(recordRowOf(record, document, at));
      heads.set(record.record_id, record.revision_id);
      current.set(record.record_id, { record_id: record.record_id, revision_id: record.revision_id, content_digest: record.content_digest });
      for (const c of ridersOf(record)) contents.push(contentRowOf(c, at));
      rememberStored(record, document);
    }
    return { records: rows, recordHeads: [...heads].map(([record_id, revision_id]) => ({ record_id, revision_id })), contents };
  }
}

function dedupe(streams: readonly StreamId[]): StreamId[] {
  const seen = new Map<string, StreamId>();
  for (const s of streams) seen.set(streamKey(s), { project_id: s.project_id, branch_id: s.branch_id });
  return [...seen.values()];
}
