import { describe, expect, it } from 'vitest';
import { markerMismatch } from '../../src/store/meta.ts';

describe('store marker rule', () => {
  const marker = { store_id: 'sto_a', schema: 5, generation: 7, created_at: 'x' };
  const ok = { schema: 5, storeId: 'sto_a', generation: 7, missingTables: [] };
  it('accepts the same store at the same or a later generation', () => {
    expect(markerMismatch(marker, ok)).toBeUndefined();
    expect(markerMismatch(marker, { ...ok, generation: 8 })).toBeUndefined();
  });
  it('names every way a file can stop being the initialised store', () => {
    expect(markerMismatch(marker, { ...ok, missingTables: ['ledger_entries'] })).toMatch(/tables missing/);
    expect(markerMismatch(marker, { ...ok, schema: 4 })).toMatch(/older/);
    expect(markerMismatch(marker, { ...ok, storeId: undefined })).toMatch(/missing/);
    expect(markerMismatch(marker, { ...ok, storeId: 'sto_b' })).toMatch(/another store/);
    expect(markerMismatch(marker, { ...ok, generation: 6 })).toMatch(/lost/);
  });
});
