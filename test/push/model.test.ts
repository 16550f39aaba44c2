import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffMs, credentialsOf, DEFAULT_RETRY, judgeTry, parseConfigInput, presentConfig, requeueRefused } from '../../src/push/model.ts';
import type { DeliveryRow } from '../../src/store/port.ts';
import { purgedBody } from '../../src/store/push-sql.ts';
import { expectCode } from '../helpers/errors.ts';

const row = { task_id: 'att_1', config_id: 'c1', caller_id: 'planner', url: 'https://hooks.example.com/x', sealed_credentials: 'v1.a.b.c', created_at: '', deleted_at: null, seen_revision: null, gateway_id: null };

describe('push config input', () => {
  it('accepts the SDK shape (absent strings as empty) and keeps credentials apart', () => {
    const input = parseConfigInput({ tenant: '', id: '', taskId: 'att_1', url: 'https://h.example.com/', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'secret-cred' } });
    expect(input.id).toBe('');
    expect(credentialsOf(input)).toEqual({ token: 'tok', authentication: { scheme: 'Bearer', credentials: 'secret-cred' } });
    expect(credentialsOf(parseConfigInput({ taskId: 't', url: 'https://h.example.com/', token: '' }))).toBeUndefined();
  });

  it.each([
    ['a header-splitting token', { token: 'a\r\nX-Evil: 1' }],
    ['a scheme with a space', { authentication: { scheme: 'Bear er', credentials: 'x' } }],
    ['credentials with a newline', { authentication: { scheme: 'Bearer', credentials: 'x\ny' } }],
    ['an oversize url', { url: `https://h.example.com/${'a'.repeat(2100)}` }],
    ['a config id with a slash', { id: 'a/b' }],
    ['no task id', { taskId: '' }],
  ])('refuses %s', (_name, patch) => {
    expectCode(() => parseConfigInput({ taskId: 'att_1', url: 'https://h.example.com/', ...patch }), 'invalid_request');
  });

  it('never presents the token or credentials, only the scheme', () => {
    const shown = presentConfig(row, 'Bearer');
    expect(shown).toEqual({ id: 'c1', taskId: 'att_1', url: row.url, token: '', authentication: { scheme: 'Bearer', credentials: '' } });
    expect(JSON.stringify(shown)).not.toContain('v1.a.b.c');
  });
});

describe('retry rules', () => {
  it('backs off exponentially with equal jitter, capped', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
        const d = backoffMs(attempt, DEFAULT_RETRY, () => r);
        const step = Math.min(DEFAULT_RETRY.maxMs, DEFAULT_RETRY.baseMs * 2 ** (attempt - 1));
        expect(d).toBeGreaterThanOrEqual(Math.floor(step / 2));
        expect(d).toBeLessThanOrEqual(step);
      }),
    );
    // The lower bound really grows until the cap.
    expect([1, 2, 3, 4].map((a) => backoffMs(a, DEFAULT_RETRY, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(40, DEFAULT_RETRY, () => 0)).toBe(DEFAULT_RETRY.maxMs / 2);
  });

  it('delivers on 2xx, gives up at once on 410 or a refused destination, retries the rest until the tries run out', () => {
    expect(judgeTry({ status: 204 }, 1, DEFAULT_RETRY)).toEqual({ status: 'delivered' });
    expect(judgeTry({ status: 410 }, 1, DEFAULT_RETRY)).toMatchObject({ status: 'dead' });
    expect(judgeTry({ error: 'refused', final: true }, 1, DEFAULT_RETRY)).toMatchObject({ status: 'dead' });
    for (const status of [302, 401, 429, 500, 503]) expect(judgeTry({ status }, 1, DEFAULT_RETRY)).toMatchObject({ status: 'pending', error: `HTTP ${status}` });
    expect(judgeTry({ error: 'timeout', final: false }, 3, DEFAULT_RETRY)).toMatchObject({ status: 'pending' });
    expect(judgeTry({ status: 503 }, DEFAULT_RETRY.maxAttempts, DEFAULT_RETRY)).toMatchObject({ status: 'dead', error: expect.stringContaining('gave up after 8 tries') });
  });
});

describe('requeue refusals', () => {
  const d = (over: Partial<DeliveryRow>): DeliveryRow => ({
    delivery_id: 'dlv_1', task_id: 'att_1', config_id: 'c1', revision_id: 'rev_1', body: '{}', status: 'dead', attempts: 8,
    next_at: '', lease_until: null, lease_owner: null, last_error: 'HTTP 410', created_at: '', delivered_at: null, gateway_id: null, ...over,
  });
  it('names why: no such delivery, not dead, or its body purged by retention (issue 25 item 16), each invalid_request', () => {
    expect(expectCode(() => { throw requeueRefused('dlv_x', undefined); }, 'invalid_request').message).toBe('no such delivery');
    expect(expectCode(() => { throw requeueRefused('dlv_1', d({ status: 'delivered' })); }, 'invalid_request').message).toBe('delivery is delivered, not dead');
    const purged = expectCode(() => { throw requeueRefused('dlv_1', d({ body: purgedBody('rp_1') })); }, 'invalid_request');
    expect(purged.message).toBe('delivery body was purged by retention; it cannot be sent again');
    expect(purged.details).toEqual({ delivery: 'dlv_1', reason: 'purged', purge: 'rp_1' });
  });
});
