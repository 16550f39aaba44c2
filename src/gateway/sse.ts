/**
 * Incremental Server-Sent Events parsing (WHATWG HTML §9.2): yields each
 * event as soon as its blank line arrives, so a stream is relayed event by
 * event and never buffered whole. Bounded: an event larger than `maxEventBytes`
 * ends the stream with limit_exceeded instead of growing without limit.
 */
import { limitExceeded } from '../errors.ts';
import type { JsonValue } from '../records/strict-json.ts';

export interface SseEvent {
  event: string;
  data: string;
  /**
   * The event's JSON-RPC envelope, when Baton framed the event itself from
   * values it already read (the v0.3 layer, src/gateway/legacy-remote.ts):
   * its own bytes need no second reading (issue #24 item 5).
   */
  envelope?: { [key: string]: JsonValue };
}

/** The default bound of one event's data (also the strict parser's bound for it, src/gateway/wire.ts). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** A body of bytes, or of events Baton framed itself (object mode), which pass through as they are. */
export async function* parseSse(body: AsyncIterable<Uint8Array | string | SseEvent>, maxEventBytes = MAX_EVENT_BYTES): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  let event = 'message';
  let size = 0;
  for await (const chunk of body) {
    if (isFramed(chunk)) {
      yield chunk;
      continue;
    }
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (let nl = buf.search(/\r\n|\r|\n/); nl >= 0; nl = buf.search(/\r\n|\r|\n/)) {
      // A CR at the very end may be the first half of CRLF: wait for the next chunk.
      if (nl === buf.length - 1 && buf[nl] === '\r') break;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        data = [];
        event = 'message';
        size = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      size += value.length;
      if (size > maxEventBytes) throw limitExceeded('stream event exceeds the size bound', { maxEventBytes });
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
    if (buf.length > maxEventBytes) throw limitExceeded('stream line exceeds the size bound', { maxEventBytes });
  }
}

const isFramed = (chunk: Uint8Array | string | SseEvent): chunk is SseEvent => typeof chunk === 'object' && !(chunk instanceof Uint8Array);
