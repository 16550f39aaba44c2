import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAcceptance, project, withFences, type Observation, type ReadBack } from '../../src/attempts/outcome.ts';
import { fingerprint, TASK_STATES, TaskView } from '../../src/attempts/task-view.ts';

const task = (state: string, artifacts: TaskView['artifacts'] = [{ artifactId: 'a1', parts: [{ mediaType: 'text/plain', text: 'hi' }] }], id = 't1'): TaskView => ({
  id,
  contextId: 'c1',
  status: { state, timestamp: '2026-12-01T10:00:00Z' },
  artifacts,
});
const seen = (t: TaskView): Observation => ({ kind: 'task', task: t, fingerprint: fingerprint(t) });
const back = (t: TaskView): ReadBack => ({ kind: 'task', task: t, fingerprint: fingerprint(t) });

describe('outcome projection', () => {
  it('projects succeeded only when a read-back agrees and acceptance passes', () => {
    const t = task('TASK_STATE_COMPLETED');
    expect(project(seen(t), back(structuredClone(t)), { minArtifacts: 1, allowedMediaTypes: ['text/plain'] })).toMatchObject({ outcome: 'succeeded', settlement: 'consume' });
  });

  it('a completed observation without read-back is unknown, never succeeded', () => {
    const t = task('TASK_STATE_COMPLETED');
    expect(project(seen(t), undefined)).toMatchObject({ outcome: 'unknown', settlement: 'hold' });
    expect(project(seen(t), { kind: 'unavailable', reason: 'reset' })).toMatchObject({ outcome: 'unknown', settlement: 'hold' });
  });

  it('the lying agent: COMPLETED observed, read-back disagrees', () => {
    const t = task('TASK_STATE_COMPLETED');
    expect(project(seen(t), back(task('TASK_STATE_WORKING')))).toMatchObject({ outcome: 'unknown', settlement: 'hold' });
    expect(project(seen(t), back(task('TASK_STATE_COMPLETED', [])))).toMatchObject({ outcome: 'partially_applied', settlement: 'hold' });
    expect(project(seen(t), back(task('TASK_STATE_COMPLETED', undefined, 'other')))).toMatchObject({ outcome: 'unknown' });
  });

  it('acceptance failure on an agreed completion is failed, budget consumed', () => {
    const t = task('TASK_STATE_COMPLETED', []);
    const p = project(seen(t), back(t), { minArtifacts: 1 });
    expect(p).toMatchObject({ outcome: 'failed', settlement: 'consume' });
    expect(p.acceptance).toEqual([{ check: 'artifacts>=1', passed: false }]);
    const img = task('TASK_STATE_COMPLETED', [{ artifactId: 'x', parts: [{ mediaType: 'image/png' }] }]);
    expect(project(seen(img), back(img), { allowedMediaTypes: ['text/plain'] }).outcome).toBe('failed');
  });

  it('timeout after transmission is unknown and holds; only a request never sent releases', () => {
    expect(project({ kind: 'lost', reason: 'timeout' }, undefined)).toMatchObject({ outcome: 'unknown', settlement: 'hold' });
    expect(project({ kind: 'not_transmitted' }, undefined)).toMatchObject({ outcome: 'failed', settlement: 'release' });
  });

  it('interrupted and working states keep the attempt open', () => {
    for (const s of ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED', 'TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED']) {
      const p = project(seen(task(s)), back(task(s)));
      expect(p.outcome).toBeUndefined();
      expect(p.settlement).toBe('hold');
    }
  });

  it('cancellation acknowledged is cancelled only when read-back shows no outputs', () => {
    const clean = task('TASK_STATE_CANCELED', []);
    expect(project(seen(clean), back(clean)).outcome).toBe('cancelled');
    const dirty = task('TASK_STATE_CANCELED');
    expect(project(seen(dirty), back(dirty))).toMatchObject({ outcome: 'partially_applied', settlement: 'hold' });
  });

  it('property: succeeded implies an agreeing read-back; release implies never transmitted; unknown never releases', () => {
    const state = fc.constantFrom(...TASK_STATES, 'TASK_STATE_BOGUS');
    const arts = fc.constantFrom<TaskView['artifacts']>([], [{ artifactId: 'a', parts: [] }], [{ artifactId: 'b', parts: [{ mediaType: 'text/plain' }] }]);
    const tv = fc.record({ state, arts, id: fc.constantFrom('t1', 't2') }).map((r) => task(r.state, r.arts, r.id));
    const obs = fc.oneof(
      fc.constant<Observation>({ kind: 'not_transmitted' }),
      fc.constant<Observation>({ kind: 'lost', reason: 'x' }),
      tv.map(seen),
    );
    const rb = fc.oneof(fc.constant(undefined), fc.constant<ReadBack>({ kind: 'unavailable', reason: 'x' }), tv.map(back));
    fc.assert(
      fc.property(obs, rb, (o, r) => {
        const p = project(o, r, { minArtifacts: 1 });
        if (p.outcome === 'succeeded') {
          expect(o.kind === 'task' && r?.kind === 'task').toBe(true);
          if (o.kind === 'task' && r?.kind === 'task') {
            expect(r.fingerprint).toEqual(o.fingerprint);
            expect(o.fingerprint.state).toBe('TASK_STATE_COMPLETED');
          }
        }
        if (p.settlement === 'release') expect(o.kind).toBe('not_transmitted');
        if (p.outcome === 'unknown' || p.outcome === 'partially_applied') expect(p.settlement).toBe('hold');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('fences moved during the effect (RW-003 §1.2)', () => {
  const ok = project(seen(task('TASK_STATE_COMPLETED')), back(task('TASK_STATE_COMPLETED')));

  it('turns a verified success into unknown, held, with the reason recorded', () => {
    expect(ok).toMatchObject({ outcome: 'succeeded', settlement: 'consume' });
    const moved = withFences(ok, false);
    expect(moved).toMatchObject({ outcome: 'unknown', settlement: 'hold' });
    expect(moved.reasons).toContain('a control head moved after admission');
  });

  it('leaves a success under current fences, and every other outcome, as they are', () => {
    expect(withFences(ok, true)).toEqual(ok);
    for (const state of ['TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']) {
      const p = project(seen(task(state, [])), back(task(state, [])));
      expect(withFences(p, false)).toEqual(p);
    }
    const lost = project({ kind: 'lost', reason: 'reset' }, undefined);
    expect(withFences(lost, false)).toEqual(lost);
  });

  it('never yields succeeded when fences moved, for any observation and read-back', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TASK_STATES), fc.constantFrom(...TASK_STATES), fc.boolean(), (a, b, same) => {
        const p = project(seen(task(a)), back(same ? task(a) : task(b)));
        expect(withFences(p, false).outcome).not.toBe('succeeded');
      }),
      { numRuns: 500 },
    );
  });
});

describe('outcome projection, exactly (the receipt records every field)', () => {
  const done = task('TASK_STATE_COMPLETED');
  const none = { acceptance: [] };

  it('each branch yields its outcome, settlement and reason', () => {
    expect(project({ kind: 'not_transmitted' }, undefined)).toEqual({ outcome: 'failed', settlement: 'release', reasons: ['never transmitted'], ...none });
    expect(project({ kind: 'lost', reason: 'timeout' }, undefined)).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['lost after transmission: timeout'], ...none });
    expect(project(seen(task('TASK_STATE_INPUT_REQUIRED')), undefined)).toEqual({ settlement: 'hold', reasons: ['interrupted: TASK_STATE_INPUT_REQUIRED'], ...none });
    expect(project(seen(task('TASK_STATE_WORKING')), undefined)).toEqual({ settlement: 'hold', reasons: ['not terminal: TASK_STATE_WORKING'], ...none });
    expect(project(seen(done), undefined)).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read-back unavailable'], ...none });
    expect(project(seen(done), { kind: 'unavailable', reason: 'reset' })).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read-back unavailable: reset'], ...none });
    expect(project(seen(done), back(task('TASK_STATE_COMPLETED', undefined, 'other')))).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read-back returned another task'], ...none });
    expect(project(seen(done), back(task('TASK_STATE_FAILED')))).toEqual({ outcome: 'unknown', settlement: 'hold', reasons: ['read-back state TASK_STATE_FAILED disagrees with observed TASK_STATE_COMPLETED'], ...none });
    expect(project(seen(done), back(structuredClone(done)))).toEqual({ outcome: 'succeeded', settlement: 'consume', reasons: ['read-back agrees; acceptance passed'], ...none });
    const cancelled = task('TASK_STATE_CANCELED', []);
    expect(project(seen(cancelled), back(cancelled))).toEqual({ outcome: 'cancelled', settlement: 'consume', reasons: ['read-back confirms cancelled'], ...none });
    const dirty = task('TASK_STATE_CANCELED');
    expect(project(seen(dirty), back(dirty))).toEqual({ outcome: 'partially_applied', settlement: 'hold', reasons: ['cancelled with outputs'], ...none });
    for (const state of ['TASK_STATE_FAILED', 'TASK_STATE_REJECTED']) {
      const t = task(state);
      expect(project(seen(t), back(t))).toEqual({ outcome: 'failed', settlement: 'consume', reasons: [`read-back confirms ${state}`], ...none });
    }
  });

  it('a read-back whose status differs (same state, same artifacts) is partially applied, not succeeded', () => {
    const later = { ...structuredClone(done), status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-12-01T10:05:00Z' } };
    expect(project(seen(done), back(later))).toEqual({ outcome: 'partially_applied', settlement: 'hold', reasons: ['read-back artifacts or status differ from the observation'], ...none });
    const otherArtifacts = task('TASK_STATE_COMPLETED', [{ artifactId: 'a1', parts: [{ mediaType: 'text/plain', text: 'bye' }] }]);
    expect(project(seen(done), back(otherArtifacts)).outcome).toBe('partially_applied');
  });

  it('acceptance: every failed check is a reason; no criteria means no checks', () => {
    const empty = task('TASK_STATE_COMPLETED', []);
    expect(project(seen(empty), back(empty), { minArtifacts: 1, allowedMediaTypes: ['text/plain'] })).toEqual({
      outcome: 'failed',
      settlement: 'consume',
      reasons: ['acceptance failed: artifacts>=1'],
      acceptance: [
        { check: 'artifacts>=1', passed: false },
        { check: 'media_types', passed: true },
      ],
    });
    expect(project(seen(empty), back(empty), { minArtifacts: 0 })).toMatchObject({ outcome: 'succeeded', acceptance: [{ check: 'artifacts>=0', passed: true }] });
  });

  it('media types: every part of every artifact must be allowed; an unstated type is not a violation', () => {
    const mixed = (parts: TaskView['artifacts']) => {
      const t = task('TASK_STATE_COMPLETED', parts);
      return project(seen(t), back(t), { allowedMediaTypes: ['text/plain'] }).acceptance;
    };
    expect(mixed([{ artifactId: 'a', parts: [{}, { mediaType: '' }, { mediaType: 'text/plain' }] }])).toEqual([{ check: 'media_types', passed: true }]);
    expect(mixed([{ artifactId: 'a', parts: [{ mediaType: 'text/plain' }, { mediaType: 'image/png' }] }])).toEqual([{ check: 'media_types', passed: false }]);
    expect(mixed([{ artifactId: 'a', parts: [{ mediaType: 'text/plain' }] }, { artifactId: 'b', parts: [{ mediaType: 'image/png' }] }])).toEqual([{ check: 'media_types', passed: false }]);
    expect(mixed([])).toEqual([{ check: 'media_types', passed: true }]);
  });
});

describe('checkAcceptance', () => {
  it('a task with no artifacts at all fails a minimum and passes a media-type check', () => {
    const bare = TaskView.parse({ id: 't1', status: { state: 'TASK_STATE_COMPLETED' } });
    expect(checkAcceptance(bare, { minArtifacts: 1, allowedMediaTypes: ['text/plain'] })).toEqual([
      { check: 'artifacts>=1', passed: false },
      { check: 'media_types', passed: true },
    ]);
  });
});
