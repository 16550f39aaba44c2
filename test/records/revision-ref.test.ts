import { describe, expect, it } from 'vitest';
import { sameRevision } from '../../src/records/revision-ref.ts';

describe('sameRevision', () => {
  const a = { object_id: 'dlg_1', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };

  it('is true only when all three parts match', () => {
    expect(sameRevision(a, { ...a })).toBe(true);
    expect(sameRevision(a, { ...a, object_id: 'dlg_2' })).toBe(false);
    expect(sameRevision(a, { ...a, revision_id: 'rev_2' })).toBe(false);
    expect(sameRevision(a, { ...a, content_digest: `sha256:${'b'.repeat(64)}` })).toBe(false);
  });
});
