/**
 * One gateway identity per cluster, against a real shared store: a second
 * node with its own keys or another publicUrl refuses to start (storage_error)
 * and moves nothing; a node presenting the same identity joins without
 * moving Baton's own agent stream.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

export function clusterIdentitySuite(name: string, storeOf: (dir: string) => Promise<Record<string, unknown>>): void {
  describe(`${name}: gateway identity`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-cluster-'));
    const running: Gateway[] = [];
    afterAll(async () => {
      for (const g of running) await g.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const node = (n: string, store: Record<string, unknown>, over: Record<string, unknown> = {}) =>
      Config.parse({ port: 0, dataDir: join(dir, n), logLevel: 'silent', publicUrl: 'https://baton.example.org', store, shutdown: { drainMs: 0 }, ...over });
    const ownHead = async (gw: Gateway) => gw.store.control.head({ space_id: 'default', scope_kind: 'agent', scope_id: gw.publisher.primary.params.agent_card_id });

    it('refuses a node with its own keys or another publicUrl, and lets a node with the same identity join without moving the agent stream', async () => {
      const store = await storeOf(dir);
      const first = await startGateway(node('a', store));
      running.push(first);
      const before = await ownHead(first);
      expect(before?.position).toBe(1);

      // Its own default keys (generated in its own data dir), same publicUrl.
      const ownKeys = await expectCodeAsync(startGateway(node('b', store)), 'storage_error');
      expect(ownKeys.details).toMatchObject({ reason: 'identity_mismatch', differs: ['signing_keys'] });
      // The cluster's keys, another publicUrl.
      cpSync(join(dir, 'a', 'keys'), join(dir, 'c', 'keys'), { recursive: true });
      const otherUrl = await expectCodeAsync(startGateway(node('c', store, { publicUrl: 'https://node-c.example.org' })), 'storage_error');
      expect(otherUrl.details).toMatchObject({ reason: 'identity_mismatch', differs: ['public_url'] });
      expect(await ownHead(first)).toEqual(before);

      // The same keys and publicUrl: one gateway, two nodes.
      const second = await startGateway(node('c', store));
      running.push(second);
      expect(await ownHead(first)).toEqual(before);
      expect(await ownHead(second)).toEqual(before);
    }, 60_000);
  });
}
