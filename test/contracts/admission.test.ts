// Final admission (RW-003 §5.2, §9): each scope dimension and each typed constraint answers with its own
// dimension and reason, and the evaluated chain carries the earliest horizon of every ancestor.
import { describe, expect, it } from 'vitest';
import { operationFailures, type OperationRequest } from '../../src/contracts/admission.ts';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { refOf } from '../../src/records/envelope.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actors, at, broadTerms, childRequest, HOUR, world } from './fixtures.ts';

/** operationFailures reads only the typed scope and constraints of the body. */
const contractWith = (constraints: unknown[] = []): DelegationContract =>
  ({ body: { scope: broadTerms().scope, constraints } }) as unknown as DelegationContract;

const op: OperationRequest = { operation: 'a2a.SendMessage', resource: { kind: 'project', project_id: 'PRJ-1' }, effect_class: 'proposal', data_class: 'public' };

describe('operationFailures: every scope dimension', () => {
  it('a request inside every dimension, with an in-scope tool or none, has no failure', () => {
    expect(operationFailures(contractWith(), op)).toStrictEqual([]);
    expect(operationFailures(contractWith(), { ...op, tool: 'search' })).toStrictEqual([]);
  });

  it('names each dimension the request falls outside of, in order', () => {
    const wide = { operation: 'a2a.ListTasks', resource: { kind: 'project', project_id: 'PRJ-9' }, effect_class: 'delete', data_class: 'restricted', tool: 'extract' } as OperationRequest;
    expect(operationFailures(contractWith(), wide)).toStrictEqual([
      { dimension: 'operations', reason: 'a2a.ListTasks is not in scope' },
      { dimension: 'objects', reason: 'resource is not in scope' },
      { dimension: 'effect_classes', reason: 'delete is not in scope' },
      { dimension: 'data_classes', reason: 'restricted is not in scope' },
      { dimension: 'tools', reason: 'extract is not in scope' },
    ]);
  });
});

describe('operationFailures: typed constraints', () => {
  const fails = (constraint: unknown, req: OperationRequest = op) => operationFailures(contractWith([constraint]), req);
  const denied = (reason: string) => [{ dimension: 'constraints', reason }];

  it('deny_operation denies exactly its operation', () => {
    expect(fails({ kind: 'deny_operation', operation: 'a2a.SendMessage' })).toStrictEqual(denied('a2a.SendMessage is denied'));
    expect(fails({ kind: 'deny_operation', operation: 'a2a.GetTask' })).toStrictEqual([]);
  });

  it('deny_resource denies what its selector covers', () => {
    expect(fails({ kind: 'deny_resource', selector: { kind: 'project', project_id: 'PRJ-1' } })).toStrictEqual(denied('resource is denied'));
    expect(fails({ kind: 'deny_resource', selector: { kind: 'project', project_id: 'PRJ-2' } })).toStrictEqual([]);
  });

  it('deny_effect_class denies exactly its effect class', () => {
    expect(fails({ kind: 'deny_effect_class', effect_class: 'proposal' })).toStrictEqual(denied('proposal is denied'));
    expect(fails({ kind: 'deny_effect_class', effect_class: 'read' })).toStrictEqual([]);
  });

  it('destination_allowlist refuses a destination outside it; no destination is not checked', () => {
    const allow = { kind: 'destination_allowlist', destinations: ['dest-eu'] };
    expect(fails(allow, { ...op, destination: 'dest-us' })).toStrictEqual(denied('destination is not allowed'));
    expect(fails(allow, { ...op, destination: 'dest-eu' })).toStrictEqual([]);
    expect(fails(allow)).toStrictEqual([]);
  });

  it('data_residency admits a listed region only, and fails closed without one', () => {
    const eu = { kind: 'data_residency', regions: ['eu'] };
    expect(fails(eu, { ...op, region: 'eu' })).toStrictEqual([]);
    expect(fails(eu, { ...op, region: 'us' })).toStrictEqual(denied('region is not allowed'));
    expect(fails(eu)).toStrictEqual(denied('region is not allowed'));
  });

  it('an unknown kind cannot be enforced, so it denies', () => {
    expect(fails({ kind: 'future_rule' })).toStrictEqual(denied('unknown constraint kind future_rule cannot be enforced'));
  });
});

describe('evaluateChain: refusals and the chain horizon', () => {
  it('the evaluated horizon is the earliest not_after of the chain, wherever it sits', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b', { limits: { not_after: at(HOUR) } }), actors.agentA);
    const ev = await w.evaluate(refOf(child.contract));
    expect(root.contract.body.limits.not_after).toBe(at(2 * HOUR));
    expect(ev.notAfter).toBe(at(HOUR));
    expect(ev.leaf).toBe(ev.contracts[1]);
  });

  it('an expired contract and a refused operation answer with their messages and details', async () => {
    const w = await world();
    const root = await w.issue();
    const refused = await expectCodeAsync(w.evaluate(refOf(root.contract), { ...op, operation: 'a2a.ListTasks' }), 'deny');
    expect(refused.message).toBe('operation is not permitted by every contract in the chain');
    expect(refused.details).toStrictEqual({
      failures: [
        { dimension: 'operations', reason: 'a2a.ListTasks is not in scope', index: 0 },
        { dimension: 'constraints', reason: 'a2a.ListTasks is denied', index: 0 },
      ],
    });
    w.clock.advance(2 * HOUR);
    const expired = await expectCodeAsync(w.evaluate(refOf(root.contract)), 'context_invalidated');
    expect(expired.message).toBe('delegation has expired');
    expect(expired.details).toStrictEqual({ reason: 'expired', index: 0, delegation_id: root.contract.record_id });
  });
});
