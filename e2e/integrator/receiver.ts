/**
 * A real integrator webhook receiver: what an integrator would run to accept Baton's
 * relayed outcomes, verifying each delivery the way the integrator docs tell them to.
 *
 * A delivery is `POST /hook` (or any path under `/hook/`) with
 *   Baton-Signature:   <b64url protected header>..<b64url signature>   (RFC 7515 App. F,
 *                      detached, over the exact raw body bytes; ES256 or EdDSA; the
 *                      protected header carries kid, alg, typ "JOSE", baton_delivery,
 *                      baton_aud, iat)
 *   Baton-Delivery-Id: the delivery id (= the `baton_delivery` claim)
 *   Idempotency-Key:   the same value again
 *   X-A2A-Notification-Token: the integrator's token, when it registered one
 * and a JSON StreamResponse body (`{"task":…}` / `{"statusUpdate":…}` …) whose payload
 * `metadata["urn:baton:outcome:v2"]` is Baton's projected outcome.
 *
 * Every request to /hook is recorded on arrival, valid or not, and listed by
 * `GET /_deliveries`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { base64url, createRemoteJWKSet, decodeProtectedHeader, flattenedVerify, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';

export const SIGNATURE_HEADER = 'Baton-Signature';
export const DELIVERY_ID_HEADER = 'Baton-Delivery-Id';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const TOKEN_HEADER = 'X-A2A-Notification-Token';
/** Protected-header claim that must equal the `Baton-Delivery-Id` header. */
export const DELIVERY_CLAIM = 'baton_delivery';
/** Protected-header claim that must equal the URL the receiver was reached at. */
export const AUDIENCE_CLAIM = 'baton_aud';
export const OUTCOME_METADATA = 'urn:baton:outcome:v2';
export const ALGORITHMS = ['ES256', 'EdDSA'];

/** At most this many deliveries are kept (oldest dropped); counts stay cumulative. */
export const MAX_DELIVERIES = 10_000;
/** Bodies above this are refused (413, recorded as invalid). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Bodies above this are recorded without `body` (only `bodyBytes`). */
const MAX_KEPT_BODY_BYTES = 64 * 1024;
const MAX_TRACKED_IDS = 100_000;

export interface IntegratorOptions {
  /** Baton's JWKS, e.g. `http://127.0.0.1:PORT/.well-known/jwks.json`. */
  jwksUrl: string;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number | undefined;
  /** When set, `X-A2A-Notification-Token` must equal it. */
  token?: string | undefined;
  /** Hold the first delivery that would be answered 200 open this long before answering. */
  holdFirstMs?: number | undefined;
  /** Answer 503 to the first N valid deliveries. */
  failFirst?: number | undefined;
  /** Accept `iat` at most this far from now, either way (default 300 s). */
  maxSkewS?: number | undefined;
}

/** One request to /hook as the receiver judged it. */
export interface DeliveryRecord {
  /** `Baton-Delivery-Id`, or null when absent. */
  id: string | null;
  valid: boolean;
  /** Why it is invalid (first failed check). */
  reason?: string;
  /** Task id of the StreamResponse payload (Baton's attempt-level task id). */
  taskId: string | null;
  /** `metadata["urn:baton:outcome:v2"].outcome`. */
  outcome: string | null;
  /** `metadata["urn:baton:outcome:v2"].verified`. */
  verified: boolean | null;
  /** `metadata["urn:baton:outcome:v2"].attemptId`. */
  attemptId: string | null;
  /** The whole `urn:baton:outcome:v2` object, if present. */
  batonOutcome: unknown;
  /** StreamResponse payload case (`task`, `statusUpdate`, …). */
  kind: string | null;
  /** Task state in the payload, e.g. `TASK_STATE_COMPLETED`. */
  state: string | null;
  /** The HTTP status the receiver answered (or is about to answer, while held). */
  status: number;
  /** The response was fully written; false while held or when the sender went away first. */
  answered: boolean;
  /** The connection closed before the response was written (e.g. the gateway was killed). */
  aborted: boolean;
  /** This delivery was the held one (`--hold-first-ms`). */
  held: boolean;
  receivedAt: string;
  path: string;
  idempotencyKey: string | null;
  kid: string | null;
  alg: string | null;
  bodyBytes: number;
  /** Parsed JSON body (raw text if not JSON; null if larger than 64 KiB). */
  body: unknown;
}

/** Shape of `GET /_deliveries`. */
export interface DeliveriesJson {
  deliveries: DeliveryRecord[];
  counts: {
    /** Requests to /hook, cumulative. */
    total: number;
    valid: number;
    invalid: number;
    /** Distinct `Baton-Delivery-Id`s among valid deliveries. */
    uniqueIds: number;
    /** Valid deliveries answered (or to be answered) 200. */
    accepted: number;
    /** Distinct ids among accepted deliveries. */
    uniqueAccepted: number;
  };
}

export interface RunningIntegrator {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `${url}/hook` */
  hookUrl: string;
  close(): Promise<void>;
}

type Verdict =
  | { ok: true; header: JWTHeaderParameters; json: Record<string, unknown> }
  | { ok: false; status: number; reason: string; header?: JWTHeaderParameters };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
};
const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The payload of a StreamResponse JSON and what the integrator cares about in it. */
function summarise(json: unknown): Pick<DeliveryRecord, 'taskId' | 'outcome' | 'verified' | 'attemptId' | 'batonOutcome' | 'kind' | 'state'> {
  const empty = { taskId: null, outcome: null, verified: null, attemptId: null, batonOutcome: undefined, kind: null, state: null };
  if (!isRecord(json)) return empty;
  const kind = ['task', 'statusUpdate', 'artifactUpdate', 'message'].find((k) => isRecord(json[k]));
  if (!kind) return empty;
  const value = json[kind] as Record<string, unknown>;
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const bo = metadata[OUTCOME_METADATA];
  const status = isRecord(value.status) ? value.status : {};
  return {
    taskId: str(kind === 'task' ? value.id : value.taskId),
    outcome: isRecord(bo) ? str(bo.outcome) : null,
    verified: isRecord(bo) && typeof bo.verified === 'boolean' ? bo.verified : null,
    attemptId: isRecord(bo) ? str(bo.attemptId) : null,
    batonOutcome: bo,
    kind,
    state: str(status.state),
  };
}

export async function startIntegrator(opts: IntegratorOptions): Promise<RunningIntegrator> {
  const jwks = createRemoteJWKSet(new URL(opts.jwksUrl));
  const maxSkewS = opts.maxSkewS ?? 300;
  const failFirst = opts.failFirst ?? 0;
  const holdFirstMs = opts.holdFirstMs ?? 0;
  const records: DeliveryRecord[] = [];
  const counts = { total: 0, valid: 0, invalid: 0 };
  const validIds = new Set<string>();
  const acceptedIds = new Set<string>();
  let accepted = 0;
  let validSeen = 0;
  let holdUsed = false;
  const held = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  let base = '';

  async function verify(req: IncomingMessage, raw: Buffer): Promise<Verdict> {
    const sig = headerOf(req, SIGNATURE_HEADER);
    if (!sig) return { ok: false, status: 401, reason: `missing ${SIGNATURE_HEADER}` };
    const parts = sig.trim().split('.');
    if (parts.length !== 3 || parts[1] !== '' || !parts[0] || !parts[2]) {
      return { ok: false, status: 401, reason: `${SIGNATURE_HEADER} is not a compact detached JWS (<protected>..<signature>)` };
    }
    const jws: FlattenedJWSInput = { protected: parts[0], payload: base64url.encode(raw), signature: parts[2] };
    let header: JWTHeaderParameters;
    try {
      header = decodeProtectedHeader(jws) as JWTHeaderParameters;
    } catch {
      return { ok: false, status: 401, reason: 'protected header is not valid JOSE' };
    }
    try {
      await flattenedVerify(jws, jwks, { algorithms: ALGORITHMS });
    } catch (err) {
      const code = isRecord(err) && typeof err.code === 'string' ? err.code : 'error';
      return { ok: false, status: 401, reason: `signature: ${code}: ${err instanceof Error ? err.message : String(err)}`, header };
    }
    if (header.typ !== 'JOSE') return { ok: false, status: 401, reason: `typ must be JOSE, got ${String(header.typ)}`, header };
    const id = headerOf(req, DELIVERY_ID_HEADER);
    if (!id) return { ok: false, status: 400, reason: `missing ${DELIVERY_ID_HEADER}`, header };
    if (header[DELIVERY_CLAIM] !== id) return { ok: false, status: 401, reason: `${DELIVERY_CLAIM} does not match ${DELIVERY_ID_HEADER}`, header };
    if (headerOf(req, IDEMPOTENCY_HEADER) !== id) return { ok: false, status: 400, reason: `${IDEMPOTENCY_HEADER} missing or different from ${DELIVERY_ID_HEADER}`, header };
    const aud = `${base}${req.url ?? ''}`;
    if (header[AUDIENCE_CLAIM] !== aud) return { ok: false, status: 401, reason: `${AUDIENCE_CLAIM} ${JSON.stringify(header[AUDIENCE_CLAIM])} is not ${aud}`, header };
    const iat = header.iat;
    if (typeof iat !== 'number' || !Number.isInteger(iat)) return { ok: false, status: 401, reason: 'iat missing or not an integer', header };
    if (Math.abs(Date.now() / 1000 - iat) > maxSkewS) return { ok: false, status: 401, reason: `iat outside ±${maxSkewS} s`, header };
    if (opts.token !== undefined && !safeEqual(headerOf(req, TOKEN_HEADER) ?? '', opts.token)) {
      return { ok: false, status: 401, reason: `${TOKEN_HEADER} missing or wrong`, header };
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return { ok: false, status: 400, reason: 'body is not JSON', header };
    }
    if (!isRecord(json) || summarise(json).kind === null) return { ok: false, status: 400, reason: 'body is not a StreamResponse', header };
    return { ok: true, header, json };
  }

  function remember(rec: DeliveryRecord): void {
    records.push(rec);
    if (records.length > MAX_DELIVERIES) records.shift();
    counts.total += 1;
    if (rec.valid) {
      counts.valid += 1;
      if (rec.id !== null && validIds.size < MAX_TRACKED_IDS) validIds.add(rec.id);
    } else counts.invalid += 1;
    if (rec.valid && rec.status === 200) {
      accepted += 1;
      if (rec.id !== null && acceptedIds.size < MAX_TRACKED_IDS) acceptedIds.add(rec.id);
    }
  }

  const answer = (res: ServerResponse, status: number, body: unknown): void => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  async function onHook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = new Date().toISOString();
    // Listen from the start: the sender may vanish while the body is read or verified.
    const conn = { aborted: false, answered: false, rec: undefined as DeliveryRecord | undefined };
    res.on('close', () => {
      if (res.writableFinished) return;
      conn.aborted = true;
      if (conn.rec) conn.rec.aborted = true;
    });
    res.on('finish', () => {
      conn.answered = true;
      if (conn.rec) conn.rec.answered = true;
    });
    const raw = await readBody(req);
    const verdict: Verdict = raw === 'too-large' ? { ok: false, status: 413, reason: `body over ${MAX_BODY_BYTES} bytes` } : await verify(req, raw);
    const bytes = raw === 'too-large' ? MAX_BODY_BYTES + 1 : raw.length;
    let body: unknown = null;
    if (raw !== 'too-large' && raw.length <= MAX_KEPT_BODY_BYTES) {
      const text = raw.toString('utf8');
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    let status = verdict.ok ? 200 : verdict.status;
    let hold = 0;
    if (verdict.ok) {
      validSeen += 1;
      if (validSeen <= failFirst) status = 503;
      else if (holdFirstMs > 0 && !holdUsed) {
        holdUsed = true;
        hold = holdFirstMs;
      }
    }
    const header = verdict.header;
    const rec: DeliveryRecord = {
      id: headerOf(req, DELIVERY_ID_HEADER) ?? null,
      valid: verdict.ok,
      ...(verdict.ok ? {} : { reason: verdict.reason }),
      ...summarise(verdict.ok ? verdict.json : body),
      status,
      answered: conn.answered,
      aborted: conn.aborted,
      held: hold > 0,
      receivedAt,
      path: req.url ?? '',
      idempotencyKey: headerOf(req, IDEMPOTENCY_HEADER) ?? null,
      kid: str(header?.kid),
      alg: str(header?.alg),
      bodyBytes: bytes,
      body,
    };
    conn.rec = rec;
    remember(rec); // on arrival, before answering: a held delivery is visible while held
    const reply = (): void => answer(res, status, verdict.ok ? { received: rec.id, status } : { error: verdict.reason });
    if (hold === 0) return reply();
    const entry = {
      res,
      timer: setTimeout(() => {
        held.delete(entry);
        reply();
      }, hold),
    };
    held.add(entry);
    res.on('close', () => {
      clearTimeout(entry.timer); // the sender is gone; nothing left to answer
      held.delete(entry);
    });
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/hook' || path.startsWith('/hook/')) {
      if (req.method !== 'POST') return answer(res, 405, { error: 'POST only' });
      onHook(req, res).catch((err: unknown) => {
        process.stderr.write(`integrator: ${err instanceof Error ? err.stack : String(err)}\n`);
        answer(res, 500, { error: 'receiver error' });
      });
      return;
    }
    if (path === '/_deliveries' && req.method === 'GET') {
      const json: DeliveriesJson = {
        deliveries: records,
        counts: { ...counts, uniqueIds: validIds.size, accepted, uniqueAccepted: acceptedIds.size },
      };
      return answer(res, 200, json);
    }
    if (path === '/_deliveries' && req.method === 'DELETE') {
      // Forgets what was received; --fail-first / --hold-first-ms stay consumed.
      records.length = 0;
      counts.total = counts.valid = counts.invalid = 0;
      accepted = 0;
      validIds.clear();
      acceptedIds.clear();
      return answer(res, 200, { cleared: true });
    }
    answer(res, 404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    hookUrl: `${base}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of held) {
          clearTimeout(h.timer);
          h.res.destroy();
        }
        held.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
