/**
 * Stopping to read a delegatee's stream once the turn is settled, without
 * breaking its connection (issue #24). An A2A server ends the stream after
 * the terminal event, but the end (the last chunk) can arrive after that
 * event does — a proxy or a server that flushes the event first. Destroying
 * the body before the end arrived makes undici abort the request, so the
 * connection is closed instead of going back to the pool; and leaving a
 * `for await` over a Node stream early builds an AbortError, stack and all,
 * for every turn (c=1 profile: ~1 % of the gateway's CPU). So the reader
 * goes through an iterator that leaves the body open when the loop stops,
 * and the rest is drained — at most TAIL_BYTES, for at most TAIL_MS — after
 * which a stream still going is destroyed after all.
 */

/** What a stream that ends by itself may still send after its terminal event. */
const TAIL_BYTES = 64 * 1024;
const TAIL_MS = 2_000;

type Body = AsyncIterable<Uint8Array>;

/** An undici response body (a Node Readable with undici's bounded `dump`). */
interface Drainable {
  iterator(opts: { destroyOnReturn: boolean }): AsyncIterableIterator<Uint8Array>;
  dump(opts: { limit: number }): Promise<unknown>;
  destroy(): void;
}

const drainable = (body: unknown): body is Drainable =>
  typeof (body as Partial<Drainable>).iterator === 'function' && typeof (body as Partial<Drainable>).dump === 'function';

/** What to read `body` through: for an undici body, an iterator that leaves it open when the reader stops. */
export function readerOf(body: Body): Body {
  return drainable(body) ? body.iterator({ destroyOnReturn: false }) : body;
}

/** The reader stopped because the turn is settled: the rest of the stream may arrive (bounded), so its connection stays reusable. */
export function finishStream(body: Body, tail: { bytes: number; ms: number } = { bytes: TAIL_BYTES, ms: TAIL_MS }): void {
  if (!drainable(body)) return closeStream(body);
  const timer = setTimeout(() => closeStream(body), tail.ms);
  timer.unref();
  body
    .dump({ limit: tail.bytes })
    .catch(() => {})
    .finally(() => clearTimeout(timer));
}

/**
 * Stops reading: the connection is closed, so the delegatee's writes stop
 * reaching Baton. An undici body destroyed before its end emits an abort
 * error; the reader that would have heard it has let go (readerOf), so it
 * is heard here — an 'error' nobody listens to would end the process.
 */
export function closeStream(body: Body): void {
  const stream = body as { destroy?: () => void; on?: (event: 'error', fn: () => void) => void };
  stream.on?.('error', ignore);
  stream.destroy?.();
}

const ignore = (): void => {};
