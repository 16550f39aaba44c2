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
import { composeEvent, headOf, inputTexts, type ComposedEvent } from '../../control/append.ts';
import type { StreamHead } from '../../control/fence.ts';
import type { ControlEvent, ParsedEventInput } from '../../control/event.ts';
import { streamKey, streamOf, type StreamId } from '../../control/scope.ts';
import type { Envelope } from '../../records/envelope.ts';
import type { IdSource } from '../../records/ids.ts';
import { invalidRequest } from '../../errors.ts';
import { checkedDocument, contentRowOf, putRecord, recordRowOf } from '../../records/put.ts';
import { ridersOf } from '../../records/detached.ts';
import { forgetFollows, rememberStored } from '../../records/decode.ts';
import { tx, type BalanceChange, type Claims, type BalanceRow, type EntryRow, type EventRow, type HeadRow, type Lock, type NodeRow, type Program, type ReservationRow, type WorkRow } from './ops.ts';

export class TxBatch {
  /** Heads as they stand inside this transaction (null: the stream has no events yet). */
  private readonly heads = new Map<string, HeadRow | null>();
  /** Nodes this transaction read or created (null: absent), and the balances of those it created, as they stand. */
  readonly nodes = new Map<string, NodeRow | null>();
  readonly balances = new Map<string, BalanceRow[]>();
  /** Nodes this transaction created, in the order opened; the last `toInsert.size` of them are not written yet. */
  private readonly created: NodeRow[] = [];
  /** The balance rows of the nodes not written yet, by node, as they will be inserted: what this batch charged them already added (journal). */
  private readonly toInsert = new Map<string, BalanceRow[]>();
  private readonly records: { record: Envelope; at: string }[] = [];
  private readonly events: EventRow[] = [];
  private readonly entries: EntryRow[] = [];
  private readonly reservations: ReservationRow[] = [];
  /** What the journalled entries add to each balance row, one change per row, written at {@link flush}. */
  private readonly charges = new Map<string, BalanceChange>();
  private readonly work: WorkRow[] = [];
  private readonly done: string[] = [];
  /** Effects whose follow-ups this transaction ends without a queued {@link endFollow} (followEndsOnResolve). */
  private readonly ending: string[] = [];
  /** The retained count a capacity statement read (rootCapacity), and how many nodes this batch had opened then. */
  private retained?: { ns: string; at: string; n: number; opened: number };
  /** The ids this transaction's admission claims (admitTask) and, once a capacity statement counted them, whether none is held. */
  private claims?: Claims & { free?: boolean };
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
    for (const r of rows) this.heads.set(streamKey(r), { ...{}, ...r, position: Number(r.position) });
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

  /**
   * Appends events composed before the transaction, one after another on
   * `base` (undefined: as a new stream's first; ledger/plan.ts, ledger/prepare.ts),
   * with nothing canonicalised or hashed here. Undefined, nothing appended,
   * when the stream's head is not `base` after all: the caller then composes
   * the events on the head there is.
   */
  *appendPlanned(planned: readonly ComposedEvent[], base: Pick<HeadRow, 'event_digest'> | undefined): Program<ControlEvent[] | undefined> {
    const last = planned.at(-1);
    if (!last) return [];
    const stream = { project_id: last.row.project_id, branch_id: last.row.branch_id };
    const head = yield* this.head(stream, 'update');
    if (!sameHead(head, base)) return undefined;
    this.events.push(...planned.map((c) => c.row));
    this.heads.set(streamKey(stream), last.headRow);
    this.moved.add(streamKey(stream));
    return planned.map((c) => c.event);
  }

  /** Queues a record revision; it is checked against its head and written at {@link flush}. */
  put(record: Envelope, at: string): void {
    this.records.push({ record, at });
  }

  /**
   * Journals balance changes and charges them to their rows, both written at
   * {@link flush} (on PostgreSQL in its one statement, issue #24). A row of a
   * node this batch opened and has not written yet is inserted charged; a
   * stored one is updated. What this batch knew of those rows is dropped;
   * {@link storedBalances} writes the charges before it reads.
   */
  journal(rows: readonly EntryRow[]): void {
    // A charge comes with a reservation written or resolved, which a retained count sees: the noted one is stale.
    this.retained = undefined;
    for (const r of rows) {
      this.balances.delete(r.node_id);
      const unwritten = this.toInsert.get(r.node_id);
      const at = unwritten?.findIndex((b) => b.dimension === r.dimension) ?? -1;
      if (at >= 0) {
        const b = unwritten![at]!;
        unwritten![at] = { ...{}, ...b, consumed: b.consumed + r.d_consumed, reserved: b.reserved + r.d_reserved };
        continue;
      }
      const key = `${r.node_id}\u0000${r.dimension}`;
      const prior = this.charges.get(key);
      this.charges.set(key, { node_id: r.node_id, dimension: r.dimension, consumed: (prior?.consumed ?? 0n) + r.d_consumed, reserved: (prior?.reserved ?? 0n) + r.d_reserved });
    }
    this.entries.push(...rows);
  }

  /** Balances as stored, after what this batch has still to write to them (its nodes, its charges). */
  *storedBalances(nodeIds: readonly string[], lock: Lock): Program<BalanceRow[]> {
    yield* this.writeNodes();
    if (this.charges.size > 0) yield* tx('addToBalances', this.takeCharges());
    return yield* tx('balances', nodeIds, lock);
  }

  private takeCharges(): BalanceChange[] {
    const out = [...this.charges.values()];
    this.charges.clear();
    return out;
  }

  /**
   * Queues a new reservation, written at {@link flush} before the entries that
   * name it (on PostgreSQL in the batch's one statement, issue #24). Nothing
   * this batch does before then reads it: the retained count a charge makes
   * stale is dropped by {@link journal}, and a count is never read after it.
   */
  reserve(row: ReservationRow): void {
    this.reservations.push(row);
  }

  /** Queues the work row of an admitted effect to be followed (work-sql.ts); it is written at {@link flush}. */
  follow(row: WorkRow): void {
    this.work.push(row);
  }

  /** Queues the end of an effect's follow-up (its work row is deleted at {@link flush}). */
  endFollow(effectId: string): void {
    this.done.push(effectId);
  }

  /** Notes an effect whose follow-up this transaction ends by resolving its reservation (work-sql.ts workEndsOnResolveSql). */
  followEndsOnResolve(effectId: string): void {
    this.ending.push(effectId);
  }

  /** Queues a node this transaction opens, with its balances; both are written by {@link writeNodes}, or with the batch at {@link flush}. */
  open(row: NodeRow, balances: BalanceRow[]): void {
    this.nodes.set(row.node_id, row);
    this.balances.set(row.node_id, balances);
    this.toInsert.set(row.node_id, [...balances]);
    this.created.push(row);
  }

  /** The nodes opened since they were last written, and their balance rows as they will be inserted; none unwritten after. */
  private takeUnwritten(): { nodes: NodeRow[]; balances: BalanceRow[] } {
    const nodes = this.created.slice(this.created.length - this.toInsert.size);
    const balances = nodes.flatMap((r) => this.toInsert.get(r.node_id) ?? []);
    for (const r of nodes) this.toInsert.delete(r.node_id);
    return { nodes, balances };
  }

  /**
   * Writes the nodes opened since the last call, one statement per table (on
   * PostgreSQL one in all). Whatever reads ledger_nodes, ledger_balances or
   * ledger_live_roots in this transaction calls this first, so no read misses
   * a node this transaction opened; a new root's live-root row comes with its
   * node (capacity.ts liveRootTriggersSql).
   */
  *writeNodes(): Program<void> {
    if (this.toInsert.size === 0) return;
    const { nodes, balances } = this.takeUnwritten();
    yield* tx('insertNodes', nodes, balances);
  }

  /** Names the ids this transaction's admission will claim, for a new root's capacity statement to count (ledger/open.ts placeRoot). */
  expectClaims(claims: Claims): void {
    this.claims = { effect_id: claims.effect_id, reservation_id: claims.reservation_id };
  }

  /** The claims a capacity statement is to count: those expected and not counted yet. */
  claimsToCount(): Claims | undefined {
    const c = this.claims;
    return c && c.free === undefined ? { effect_id: c.effect_id, reservation_id: c.reservation_id } : undefined;
  }

  /** Keeps what a capacity statement counted of `claims` (claimsToCount's). */
  noteClaimed(claims: Claims, n: number): void {
    this.claims = { effect_id: claims.effect_id, reservation_id: claims.reservation_id, free: n === 0 };
  }

  /**
   * True when a capacity statement of this transaction found no reservation
   * holding either id: none can hold one since, as this batch writes its
   * reservations only at flush (on PostgreSQL a concurrent one fails the
   * insert, and the transaction runs again from its start).
   */
  claimsFree(claims: Claims): boolean {
    return this.claims?.free === true && this.claims.effect_id === claims.effect_id && this.claims.reservation_id === claims.reservation_id;
  }

  /** Keeps the retained count of `ns` at `at` a capacity statement read, every node this batch opened so far written. */
  noteRetained(ns: string, at: string, n: number): void {
    this.retained = { ns, at, n, opened: this.created.length };
  }

  /**
   * The retained count of `ns` at `at` (capacity.ts retainedSql) without a
   * statement: the one noted, plus the nodes opened since under roots this
   * batch opened — live, as nothing is reserved under a root before it
   * commits — unexpired at `at` (a child never outlives its root, so its
   * root is unexpired too). Undefined when none was noted for `ns` and `at`,
   * or a node opened since is under a stored root, whose liveness only the
   * store knows. The batch writes nothing else a count sees before the
   * admission's count (admitIn), so nothing else can have changed it.
   */
  retainedNow(ns: string, at: string): number | undefined {
    const noted = this.retained;
    if (noted?.ns !== ns || noted.at !== at) return undefined;
    const since = this.created.slice(noted.opened);
    const newRoots = new Set(this.created.filter((n) => n.parent_id === null).map((n) => n.node_id));
    if (since.some((n) => !newRoots.has(n.root_id))) return undefined;
    const t = Date.parse(at);
    return noted.n + since.filter((n) => n.owner_namespace === ns && Date.parse(n.not_after) > t).length;
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

  /**
   * Writes everything queued: one statement per table (on PostgreSQL one
   * statement in all, TxOps.writeBatch). A queued record that is not its
   * record's plain next revision (a replay, a conflict, a bad prior, a second
   * revision of one record here) is left out of it and takes the single-row
   * path after it, whose rules decide and name the refusal.
   */
  *flush(): Program<void> {
    // The nodes still unwritten go first in the batch's own write (on PostgreSQL its one statement), their rows charged.
    const { nodes, balances } = this.takeUnwritten();
    const queued = this.records.splice(0).map(({ record, at }) => ({ record, at, document: checkedDocument(record) }));
    const batched = new Map<string, (typeof queued)[number]>();
    for (const q of queued) {
      const prior = q.record.prior_revision_ref;
      if (!batched.has(q.record.record_id) && (!prior || prior.object_id === q.record.record_id)) batched.set(q.record.record_id, q);
    }
    const records = [...batched.values()].map(({ record, document, at }) => Object.assign(recordRowOf(record, document, at), { prior_digest: record.prior_revision_ref?.content_digest ?? null })); // the row is fresh: its digest added in place
    // A batched record's content rides with it: a content row is keyed by its digest and never replaced, and one
    // written for a record that did not fit is either already stored (a replay) or goes with the refusal's rollback.
    const contents = [...batched.values()].flatMap(({ record, at }) => ridersOf(record).map((c) => contentRowOf(c, at)));
    // One row per stream: its head after the last event this batch appended.
    const heads = [...this.moved].map((k) => this.heads.get(k)!);
    this.moved.clear();
    const [work, done] = [this.work.splice(0), this.done.splice(0)];
    const written = yield* tx('writeBatch', { nodes, balances, records, contents, events: this.events.splice(0), heads, reservations: this.reservations.splice(0), entries: this.entries.splice(0), charges: this.takeCharges(), work, done });
    if (written.heads !== written.revisions.length) {
      // A head moved after this transaction's snapshot (PostgreSQL): what the single-row path says on finding it moved.
      throw invalidRequest('a new revision must name the current head as its prior revision', { conflict: 'head_moved' });
    }
    const wrote = new Set(written.revisions);
    // An admission's records are re-read while its turn is in flight; a verdict's, which ends it, are not (decode.ts).
    const follows = work.map((w) => w.effect_id);
    const ended = [...done, ...this.ending.splice(0)];
    forgetFollows(ended);
    for (const { record, at, document } of queued) {
      if (wrote.has(record.revision_id) && batched.get(record.record_id)?.record === record) {
        if (ended.length === 0) rememberStored(record, document, follows);
      } else yield* putRecord(record, at);
    }
  }
}

/** The same event at the head of a stream (its digest names it: position, id and chain, RW-003 §1.2), or both streams without events. */
function sameHead(a: Pick<HeadRow, 'event_digest'> | undefined, b: Pick<HeadRow, 'event_digest'> | undefined): boolean {
  return a?.event_digest === b?.event_digest;
}

function dedupe(streams: readonly StreamId[]): StreamId[] {
  const seen = new Map<string, StreamId>();
  for (const s of streams) seen.set(streamKey(s), { project_id: s.project_id, branch_id: s.branch_id });
  return [...seen.values()];
}
