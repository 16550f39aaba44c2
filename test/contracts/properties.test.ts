/** Property-based checks of attenuation (fast-check). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attenuate, compareTerms } from '../../src/contracts/attenuation.ts';
import { durationSeconds } from '../../src/contracts/limits.ts';
import { anyCovers, type ResourceSelector } from '../../src/contracts/scope.ts';
import type { Terms, TermsRequest } from '../../src/contracts/terms.ts';
import { broadTerms } from './fixtures.ts';

const ROOT = broadTerms();
const nonEmptySub = <T>(xs: readonly T[]) => fc.subarray([...xs], { minLength: 1 });
const upTo = (n: number) => fc.integer({ min: 0, max: n });

/** A selector inside one of `parents`: the same one, an object in it or a revision of it. */
const narrowerSelector = (parents: readonly ResourceSelector[]): fc.Arbitrary<ResourceSelector> =>
  fc.constantFrom(...parents).chain((p): fc.Arbitrary<ResourceSelector> => {
    const obj = p.kind === 'project' ? fc.constantFrom('o1', 'o2') : fc.constant(p.object_id);
    return fc.oneof(
      fc.constant(p),
      p.kind === 'revision' ? fc.constant(p) : obj.map((object_id) => ({ kind: 'object' as const, project_id: p.project_id, object_id })),
      obj.map((object_id) => ({ kind: 'revision' as const, project_id: p.project_id, object_id, revision_id: p.kind === 'revision' ? p.revision_id : 'r1' })),
    );
  });

/** A request that only narrows `t` (or omits a field, inheriting it). */
function narrowing(t: Terms): fc.Arbitrary<TermsRequest> {
  const l = t.limits;
  const opt = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: undefined });
  return fc.record(
    {
      scope: opt(
        fc.record(
          {
            operations: nonEmptySub(t.scope.operations),
            tools: fc.subarray(t.scope.tools),
            resources: fc.array(narrowerSelector(t.scope.resources), { minLength: 1, maxLength: 3 }),
            data_classes: nonEmptySub(t.scope.data_classes),
            effect_classes: nonEmptySub(t.scope.effect_classes),
          },
          { requiredKeys: [] },
        ),
      ),
      limits: opt(
        fc.record(
          {
            not_after: fc.integer({ min: 0, max: 3_600_000 }).map((ms) => new Date(Date.parse(l.not_after) - ms).toISOString()),
            max_duration: upTo(durationSeconds(l.max_duration)).map((value) => ({ value, unit: 's' as const })),
            max_tokens: upTo(l.max_tokens),
            max_tool_calls: upTo(l.max_tool_calls),
            max_retries: upTo(l.max_retries),
            max_concurrency: upTo(l.max_concurrency),
            spend: l.spend
              ? fc.option(fc.bigInt({ min: 0n, max: BigInt(l.spend.amount_minor) }).map((n) => ({ amount_minor: n.toString(), currency: l.spend!.currency })), { nil: null })
              : fc.constant(null),
          },
          { requiredKeys: [] },
        ),
      ),
      budget_ceilings: opt(fc.tuple(...t.budget_ceilings.map((d) => fc.bigInt({ min: 0n, max: BigInt(d.ceiling) }).map((n) => ({ ...d, ceiling: n.toString() }))))),
      human_authorities: opt(fc.constant([...t.human_authorities, { principal_id: 'pr_extra', role: 'extra' }])),
      monitoring: opt(fc.record({ heartbeat_max_seconds: upTo(t.monitoring.heartbeat_max_seconds) })),
      subdelegation_policy: opt(fc.record({ max_descendants: upTo(t.subdelegation_policy.max_descendants) })),
      retry_policy: opt(fc.record({ max_attempts: upTo(t.retry_policy.max_attempts) })),
    },
    { requiredKeys: [] },
  );
}

function ok(parent: Terms, req: TermsRequest): Terms {
  const r = attenuate(parent, req);
  if (!r.ok) throw new Error(`narrowing refused: ${JSON.stringify(r.failures)}`);
  return r.terms;
}

/** An independent oracle for the permission dimensions. */
function within(p: Terms, c: Terms): boolean {
  const sub = <T>(xs: readonly T[], ys: readonly T[]) => xs.every((x) => ys.includes(x));
  return (
    sub(c.scope.operations, p.scope.operations) &&
    sub(c.scope.tools, p.scope.tools) &&
    sub(c.scope.effect_classes, p.scope.effect_classes) &&
    sub(c.scope.data_classes, p.scope.data_classes) &&
    c.scope.resources.every((r) => anyCovers(p.scope.resources, r)) &&
    Date.parse(c.limits.not_after) <= Date.parse(p.limits.not_after) &&
    c.limits.max_tokens <= p.limits.max_tokens &&
    (c.limits.spend === undefined || (p.limits.spend !== undefined && BigInt(c.limits.spend.amount_minor) <= BigInt(p.limits.spend.amount_minor))) &&
    c.subdelegation_policy.max_remaining_depth < Math.max(1, p.subdelegation_policy.max_remaining_depth)
  );
}

/** Mutations that widen a child beyond `p` on exactly the named dimension. */
const WIDEN: Array<[string, (c: Terms, p: Terms) => Terms]> = [
  ['objects', (c) => ({ ...c, scope: { ...c.scope, resources: [...c.scope.resources, { kind: 'project', project_id: 'PRJ-X' }] } })],
  ['operations', (c) => ({ ...c, scope: { ...c.scope, operations: [...c.scope.operations, 'a2a.SetTaskPushNotificationConfig'] } })],
  ['tools', (c) => ({ ...c, scope: { ...c.scope, tools: [...c.scope.tools, 'extract'] } })],
  ['data_classes', (c) => ({ ...c, scope: { ...c.scope, data_classes: [...c.scope.data_classes, 'restricted'] } })],
  ['effect_classes', (c) => ({ ...c, scope: { ...c.scope, effect_classes: [...c.scope.effect_classes, 'spend'] } })],
  ['expiry', (c, p) => ({ ...c, limits: { ...c.limits, not_after: new Date(Date.parse(p.limits.not_after) + 1000).toISOString() } })],
  ['duration', (c, p) => ({ ...c, limits: { ...c.limits, max_duration: { value: durationSeconds(p.limits.max_duration) + 1, unit: 's' } } })],
  ['tokens', (c, p) => ({ ...c, limits: { ...c.limits, max_tokens: p.limits.max_tokens + 1 } })],
  ['retries', (c, p) => ({ ...c, limits: { ...c.limits, max_retries: p.limits.max_retries + 1 } })],
  ['concurrency', (c, p) => ({ ...c, limits: { ...c.limits, max_concurrency: p.limits.max_concurrency + 1 } })],
  ['spend', (c, p) => ({ ...c, limits: { ...c.limits, spend: { amount_minor: (BigInt(p.limits.spend?.amount_minor ?? '0') + 1n).toString(), currency: 'USD' } } })],
  ['budget', (c, p) => ({ ...c, budget_ceilings: c.budget_ceilings.map((d, i) => (i === 0 ? { ...d, ceiling: (BigInt(p.budget_ceilings[0]!.ceiling) + 1n).toString() } : d)) })],
  ['depth', (c, p) => ({ ...c, subdelegation_policy: { ...c.subdelegation_policy, max_remaining_depth: p.subdelegation_policy.max_remaining_depth } })],
  ['human_authorities', (c) => ({ ...c, human_authorities: [] })],
  ['consent', (c) => ({ ...c, consent_refs: [] })],
  ['constraints', (c) => ({ ...c, constraints: [] })],
  ['monitoring', (c) => ({ ...c, monitoring: { ...c.monitoring, modes: ['continuous'] } })],
  ['autonomy', (c) => ({ ...c, autonomy: { ...c.autonomy, tier: 'T4_consequential_execute' } })],
];

describe('attenuation properties', () => {
  it('a narrowing request is always accepted and never widens (independent oracle)', () => {
    fc.assert(
      fc.property(narrowing(ROOT), (req) => {
        const child = ok(ROOT, req);
        expect(within(ROOT, child)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('is transitive: parent → child → grandchild proves grandchild within parent', () => {
    const chainArb = narrowing(ROOT).chain((r1) => {
      const child = ok(ROOT, r1);
      return narrowing(child).map((r2) => [child, ok(child, r2)] as const);
    });
    fc.assert(
      fc.property(chainArb, ([child, grand]) => {
        expect(compareTerms(ROOT, child, 'child')).toEqual([]);
        expect(compareTerms(child, grand, 'child')).toEqual([]);
        expect(compareTerms(ROOT, grand, 'child')).toEqual([]);
        expect(within(ROOT, grand)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('a randomly mutated wider child is always refused, on the mutated dimension', () => {
    fc.assert(
      fc.property(narrowing(ROOT), fc.constantFrom(...WIDEN), (req, [dimension, widen]) => {
        const wider = widen(ok(ROOT, req), ROOT);
        const failures = compareTerms(ROOT, wider, 'child');
        expect(failures.map((f) => f.dimension)).toContain(dimension);
      }),
      { numRuns: 400 },
    );
  });

  it('a random stack of widenings is always refused and every one is reported', () => {
    fc.assert(
      fc.property(narrowing(ROOT), fc.subarray(WIDEN, { minLength: 1 }), (req, mutations) => {
        const wider = mutations.reduce((c, [, widen]) => widen(c, ROOT), ok(ROOT, req));
        const reported = new Set(compareTerms(ROOT, wider, 'child').map((f) => f.dimension));
        for (const [dimension] of mutations) expect(reported.has(dimension)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('any omitted field inherits the parent value', () => {
    const keys = ['scope', 'budget_ceilings', 'human_authorities', 'reviewers', 'consent_refs', 'verification', 'monitoring', 'retry_policy', 'revocation', 'control_scopes', 'constraints', 'autonomy'] as const;
    fc.assert(
      fc.property(narrowing(ROOT), fc.subarray([...keys], { minLength: 1 }), (req, omitted) => {
        const trimmed = { ...req } as Record<string, unknown>;
        for (const k of omitted) delete trimmed[k];
        const child = ok(ROOT, trimmed as TermsRequest);
        for (const k of omitted) expect(child[k]).toEqual(ROOT[k]);
      }),
      { numRuns: 200 },
    );
  });
});
