import { describe, expect, it } from 'vitest';
import { decideIdentity, type GatewayIdentity } from '../../src/keys/gateway-identity.ts';
import { expectCode } from '../helpers/errors.ts';

const cluster: GatewayIdentity = { gateway_id: 'actor_baton', public_url: 'https://baton.example.org', kids: ['es256-a', 'eddsa-a'] };

describe('gateway identity rule', () => {
  it('the first node defines it; the same identity is accepted unchanged', () => {
    expect(decideIdentity(undefined, cluster)).toEqual(cluster);
    expect(decideIdentity(cluster, { ...cluster, kids: ['eddsa-a', 'es256-a'] }).kids).toEqual(['eddsa-a', 'es256-a']);
  });

  it('a rotation adds a key: a node holding all the old keys and a new one is accepted and the set grows', () => {
    expect(decideIdentity(cluster, { ...cluster, kids: [...cluster.kids, 'es256-b'] }).kids).toEqual(['eddsa-a', 'es256-a', 'es256-b']);
  });

  it('another publicUrl, or a node missing one of the keys, is storage_error identity_mismatch', () => {
    const url = expectCode(() => decideIdentity(cluster, { ...cluster, public_url: 'https://node-2.example.org' }), 'storage_error');
    expect(url.details).toMatchObject({ reason: 'identity_mismatch', differs: ['public_url'] });
    const keys = expectCode(() => decideIdentity(cluster, { ...cluster, kids: ['es256-own'] }), 'storage_error');
    expect(keys.details).toMatchObject({ differs: ['signing_keys'], missing_kids: ['es256-a', 'eddsa-a'] });
    expectCode(() => decideIdentity(cluster, { ...cluster, public_url: null }), 'storage_error');
  });
});
