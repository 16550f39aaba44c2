/**
 * Baton's own webhook, registered with delegatees. What arrives here is
 * never believed: a notification only tells Baton that a task may have
 * moved, so Baton re-reads the task itself and the read-back decides
 * (DESIGN §6). Authentication still matters — it keeps strangers from
 * making Baton poll — so every delivery must carry the per-task token Baton
 * minted, and, where the operator requires it (or the delegatee sends one),
 * a JWT signed by a key pinned for the delegatee's card origin. Replays and
 * out-of-order deliveries are harmless by construction: a closed task
 * ignores them, an open one is simply re-read.
 */
import { createHash } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { TrustStore } from '../cards/trust-store.ts';
import { originOf } from '../cards/trust-store.ts';
import { BatonError } from '../errors.ts';
import type { AttemptBody } from '../attempts/record.ts';
import { attemptOf, remoteTaskIdOf } from '../gateway/attempts.ts';
import type { DelegateeConfig } from '../gateway/delegatees.ts';
import { sendHttpError, toBatonError } from '../http/error-map.ts';
import type { Logger } from '../log.ts';
import type { SealedRecord } from '../records/envelope.ts';
import { ALLOWED_ALGS } from '../records/signature.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import type { Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { SecretBox } from './secret-box.ts';

type Json = { [key: string]: JsonValue };
type Attempt = SealedRecord<AttemptBody>;

export const INBOUND_PATH = '/push/inbound';
/** Expired jtis are swept at most this often, not on every request. */
const JTI_PRUNE_MS = 10_000;
/** JWT ids remembered at once; beyond that notifications are refused as unavailable (the delegatee retries or Baton polls). */
const MAX_JTIS = 100_000;
const TOKEN_HEADER = 'x-a2a-notification-token';

export interface InboundDeps {
  store: Store;
  box: SecretBox;
  trust: TrustStore;
  publicUrl: string;
  logger: Logger;
  delegatee: (id: string) => DelegateeConfig | undefined;
  /** Re-reads the task at its delegatee and verifies it if terminal. */
  refresh: (taskId: string) => Promise<void>;
  /** The push clock (records/time.ts): token age and the replay window are judged by it. */
  clock: Clock;
  maxBytes?: number;
}

export class InboundWebhooks {
  /**
   * JWT ids already accepted, with when they may be forgotten: a captured JWT
   * cannot be replayed within its lifetime — to this process. The map is
   * per process; several nodes behind a balancer each accept a given jti once.
   */
  private readonly seenJti = new Map<string, number>();
  private prunedAt = 0;
  private readonly refreshing = new Map<string, { again: boolean }>();

  constructor(private readonly deps: InboundDeps) {}

  urlFor(taskId: string): string {
    return `${this.deps.publicUrl}${INBOUND_PATH}/${encodeURIComponent(taskId)}`;
  }

  /** The webhook Baton registers at the delegatee for one of its tasks (A2A TaskPushNotificationConfig fields). */
  registrationFor(taskId: string): { id: string; url: string; token: string } {
    return { id: 'baton', url: this.urlFor(taskId), token: this.deps.box.inboundToken(taskId) };
  }

  router(): Router {
    const router = Router();
    const raw = express.raw({ limit: this.deps.maxBytes ?? 256 * 1024, type: () => true });
    router.post(`${INBOUND_PATH}/:taskId`, raw, async (req: Request, res: Response) => {
      try {
        const verdict = await this.accept(String(req.params.taskId), req);
        res.status(verdict.status).json(verdict.body);
      } catch (err) {
        // Rendered by the one renderer of Baton's HTTP routes (src/http/error-map.ts): the ADR-0014 table's status, not a local one.
        const taskId = String(req.params.taskId).slice(0, 80);
        const e = toBatonError(err);
        if (e.code === 'storage_error') this.deps.logger.error({ task_id: taskId, err: err instanceof Error ? err.message : String(err) }, 'push inbound: unexpected failure');
        else if (e.code !== 'invalid_request') this.deps.logger.warn({ code: e.code, task_id: taskId }, `push inbound: ${e.message}`);
        sendHttpError(res, e);
      }
    });
    return router;
  }

  private async accept(taskId: string, req: Request): Promise<{ status: number; body: Json }> {
    const attempt = await this.attempt(taskId);
    // Same answer for an unknown task and a bad token: no oracle for task ids.
    if (!attempt || !this.deps.box.inboundTokenMatches(taskId, header(req, TOKEN_HEADER))) throw new BatonError('authentication_required', 'notification token not accepted');
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const delegatee = this.deps.delegatee(attempt.body.delegatee_id);
    // The task the delegatee named: on the attempt after a verdict, on the turn's work row while it is followed.
    const remoteTask = await remoteTaskIdOf(this.deps.store, attempt);
    const bearer = /^Bearer (.+)$/i.exec(header(req, 'authorization') ?? '')?.[1];
    if (bearer !== undefined || delegatee?.inboundAuth === 'token+jwt') {
      if (!delegatee || bearer === undefined) throw new BatonError('authentication_required', 'this delegatee must sign its notifications');
      await this.verifyJwt(bearer, taskId, remoteTask, delegatee, bytes);
    }
    const body = parseStrictJson(bytes, { maxBytes: this.deps.maxBytes ?? 256 * 1024 });
    const named = taskIdOf(body);
    if (remoteTask !== undefined && named !== remoteTask) {
      throw new BatonError('invalid_request', 'notification is about another task');
    }
    if (attempt.body.state === 'closed') return { status: 200, body: { status: 'ignored', reason: 'task already has a verified outcome' } };
    this.schedule(taskId);
    return { status: 202, body: { status: 'accepted' } };
  }

  private async attempt(taskId: string): Promise<Attempt | undefined> {
    if (taskId.length > 256) return undefined;
    return attemptOf(await this.deps.store.getRecord(taskId));
  }

  private async verifyJwt(jwt: string, taskId: string, remoteTask: string | undefined, delegatee: DelegateeConfig, body: Buffer): Promise<void> {
    const fail = (why: string) => new BatonError('authentication_required', `notification JWT not accepted: ${why}`);
    let header: { alg?: unknown; kid?: unknown };
    try {
      header = decodeProtectedHeader(jwt);
    } catch {
      throw fail('malformed');
    }
    const alg = ALLOWED_ALGS.find((a) => a === header.alg);
    if (!alg || typeof header.kid !== 'string') throw fail('alg or kid not acceptable');
    // Keys pinned for the delegatee's card origin: the same trust that verified its card.
    const found = await this.deps.trust.lookup(originOf(delegatee.cardUrl), { alg, kid: header.kid });
    if (!found.ok) throw fail(found.reason);
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(jwt, found.key.key, { algorithms: [alg], audience: this.urlFor(taskId), maxTokenAge: '5m', clockTolerance: 30, currentDate: this.deps.clock.now() }));
    } catch {
      throw fail('signature or claims do not verify');
    }
    if (remoteTask !== undefined && payload.task_id !== remoteTask) throw fail('task_id claim names another task');
    if (typeof payload.body_sha256 !== 'string') throw fail('body_sha256 missing');
    if (payload.body_sha256 !== createHash('sha256').update(body).digest('base64url')) throw fail('body_sha256 does not match the body');
    const jti = typeof payload.jti === 'string' ? payload.jti : undefined;
    if (!jti) throw fail('jti missing');
    const now = this.deps.clock.now().getTime();
    if (now - this.prunedAt >= JTI_PRUNE_MS) {
      this.prunedAt = now;
      for (const [k, exp] of this.seenJti) if (exp < now) this.seenJti.delete(k);
    }
    const seenUntil = this.seenJti.get(jti);
    if (seenUntil !== undefined && seenUntil >= now) throw fail('replayed');
    if (this.seenJti.size >= MAX_JTIS) throw new BatonError('unavailable', 'too many notifications in flight');
    this.seenJti.set(jti, now + 6 * 60_000);
  }

  /** One re-read per task at a time; notifications arriving meanwhile coalesce into one more. */
  private schedule(taskId: string): void {
    const inFlight = this.refreshing.get(taskId);
    if (inFlight) {
      inFlight.again = true;
      return;
    }
    const state = { again: false };
    this.refreshing.set(taskId, state);
    const run = async (): Promise<void> => {
      do {
        state.again = false;
        await this.deps.refresh(taskId).catch((err) => this.deps.logger.info({ task_id: taskId, err: err instanceof Error ? err.message : String(err) }, 'push inbound: re-read failed; the task stays open'));
      } while (state.again);
      this.refreshing.delete(taskId);
    };
    void run();
  }

  /** Waits for scheduled re-reads (tests, shutdown). */
  async idle(): Promise<void> {
    for (let i = 0; i < 100 && this.refreshing.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
  }
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The remote task a StreamResponse is about. */
function taskIdOf(body: JsonValue): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Json;
  const task = b.task as Json | undefined;
  if (task && typeof task.id === 'string') return task.id;
  for (const k of ['statusUpdate', 'artifactUpdate', 'message'] as const) {
    const v = b[k] as Json | undefined;
    if (v && typeof v.taskId === 'string') return v.taskId;
  }
  return undefined;
}
