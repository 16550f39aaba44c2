import { describe, expect, it } from 'vitest';
import { parseSse } from '../../src/gateway/sse.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

async function collect(chunks: string[], max?: number) {
  const out = [];
  async function* src() {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  for await (const e of parseSse(src(), max)) out.push(e);
  return out;
}

describe('SSE parsing', () => {
  it('splits events across arbitrary chunk boundaries and line endings', async () => {
    const text = 'data: {"a":1}\n\n: comment\r\nevent: error\r\ndata: x\r\ndata: y\r\n\r\ndata:z\r\rdata: {"b":2}\n\n';
    const whole = await collect([text]);
    const bytewise = await collect(text.split(''));
    expect(whole).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'error', data: 'x\ny' },
      { event: 'message', data: 'z' },
      { event: 'message', data: '{"b":2}' },
    ]);
    expect(bytewise).toEqual(whole);
  });

  it('ignores an unterminated trailing event and bounds event size', async () => {
    expect(await collect(['data: a\n\ndata: partial'])).toEqual([{ event: 'message', data: 'a' }]);
    await expectCodeAsync(collect([`data: ${'x'.repeat(100)}\n\n`], 50), 'limit_exceeded');
    await expectCodeAsync(collect(['data: ' + 'x'.repeat(100)], 50), 'limit_exceeded');
  });

  it('passes events Baton framed itself through as they are, envelope included', async () => {
    const framed = { event: 'message', data: '{"jsonrpc":"2.0"}', envelope: { jsonrpc: '2.0' } };
    async function* src() {
      yield framed;
      yield new TextEncoder().encode('data: {"b":2}\n\n');
    }
    const out = [];
    for await (const e of parseSse(src())) out.push(e);
    expect(out).toEqual([framed, { event: 'message', data: '{"b":2}' }]);
    expect(out[0]).toBe(framed);
  });
});
