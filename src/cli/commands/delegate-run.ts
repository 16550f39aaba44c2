/** What `baton delegate issue|show` do (./delegate.ts declares them): loaded when one of them runs, not when the CLI starts. */
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolvedPaths, type Config } from '../../config.ts';
import { verifyChain, loadChain } from '../../contracts/attestation-chain.ts';
import { storeHeads } from '../../contracts/heads.ts';
import { gatewayActorRef, localCaller, parseRevisionRefText } from '../../contracts/identities.ts';
import { issueContract } from '../../contracts/issuance.ts';
import { parseContract, type OwnerBinding } from '../../contracts/model.ts';
import { definePreset, localDirectPreset, type Preset } from '../../contracts/presets.ts';
import { renderChainTree } from '../../contracts/render-tree.ts';
import { defaultScopeRegistry, type EffectClass, type ResourceSelector } from '../../contracts/scope.ts';
import { isBatonError } from '../../errors.ts';
import { Keyring } from '../../keys/keyring.ts';
import { digestOf } from '../../records/digest.ts';
import { refOf, type Envelope } from '../../records/envelope.ts';
import { randomIds } from '../../records/ids.ts';
import type { RevisionRef } from '../../records/revision-ref.ts';
import { parseStrictJson } from '../../records/strict-json.ts';
import { systemClock } from '../../records/time.ts';
import { openStore } from '../../store/open.ts';

export interface IssueOptions {
  preset: string;
  delegateeCard: string;
  delegateeActor: string;
  operator: string;
  objective: string;
  objectiveType: string;
  operation: string[];
  resource: string[];
  dataClass: string[];
  input: string[];
  purpose?: string;
  json?: boolean;
}

function ownerOf(config: Config): OwnerBinding {
  return { namespace: 'local', access_domain: 'local', space_id: 'local', config_revision: digestOf(config) };
}

async function signerOf(config: Config, owner: OwnerBinding) {
  const entry = (await Keyring.open(resolvedPaths(config).keys)).current('ES256');
  return { actorRef: gatewayActorRef(owner), kid: entry.kid, alg: entry.alg, key: entry.privateKey };
}

export async function issue(config: Config, o: IssueOptions): Promise<void> {
  const owner = ownerOf(config);
  const caller = localCaller(userInfo().username, owner);
  const delegatee = { card_ref: ref(o.delegateeCard, '--delegatee-card'), actor_ref: ref(o.delegateeActor, '--delegatee-actor'), operator_ref: ref(o.operator, '--operator') };
  const preset = await presetOf(o, delegatee, caller.actor);
  const request = {
    delegatee_card_ref: delegatee.card_ref,
    objective: { text: o.objective, type: o.objectiveType },
    input_revisions: o.input.map((t) => ref(t, '--input')),
    ...(o.purpose === undefined ? {} : { purpose: o.purpose }),
  };
  const deps = { clock: systemClock, ids: randomIds, signer: await signerOf(config, owner), owner, registry: defaultScopeRegistry };
  const { contract, chain } = await issueContract(request, caller, { path: 'owner_preset', preset }, deps);
  const store = await openStore(config);
  try {
    await store.putRecord(contract as unknown as Envelope);
  } finally {
    await store.close();
  }
  if (o.json) console.log(JSON.stringify(contract, null, 2));
  else console.log(renderChainTree([contract]));
  console.error(`stored ${chain.leaf_ref.object_id}@${chain.leaf_ref.revision_id} (${chain.leaf_ref.content_digest})`);
}

async function presetOf(o: IssueOptions, delegatee: Preset['eligible_delegatees'][number], ownerActor: RevisionRef): Promise<Preset> {
  if (o.preset !== 'local-direct') {
    const raw = parseStrictJson(await readFile(o.preset));
    return definePreset(raw);
  }
  if (o.resource.length === 0) throw new TypeError('local-direct needs at least one --resource (there are no wildcard selectors)');
  const operations = o.operation.length > 0 ? o.operation : ['a2a.SendMessage', 'a2a.GetTask'];
  const effects = new Set<EffectClass>();
  for (const op of operations) {
    const reg = defaultScopeRegistry.operations.get(op);
    if (!reg) throw new TypeError(`unregistered operation ${op}`);
    effects.add(reg.effect_class);
  }
  const scope = { operations, tools: [], resources: o.resource.map(selectorOf), data_classes: o.dataClass.length > 0 ? o.dataClass : ['public'], effect_classes: [...effects] };
  return localDirectPreset({ scope, delegatees: [delegatee], objectiveTypes: [o.objectiveType], owner: ownerActor, spaceId: 'local' });
}

export async function show(config: Config, id: string, revision?: string): Promise<void> {
  const store = await openStore(config, { create: false });
  try {
    const head = await store.getRecord(id, revision);
    if (!head) throw new TypeError(`no delegation ${id}${revision ? `@${revision}` : ''} in the store`);
    const records = await loadChain(store, refOf(head));
    console.log(renderChainTree(records.map((r) => parseContract(r))));
    const ring = await Keyring.open(resolvedPaths(config).keys, { generate: false });
    const gateway = gatewayActorRef(ownerOf(config));
    const resolveSignerKey = async (kid: string, issuer: RevisionRef) =>
      issuer.object_id === gateway.object_id ? ring.all().find((k) => k.kid === kid)?.publicKey : undefined;
    try {
      await verifyChain(records, { clock: systemClock, resolveSignerKey, heads: storeHeads(store) });
      console.log('chain: verified (signatures, order, attenuation, current heads)');
    } catch (err) {
      if (!isBatonError(err)) throw err;
      console.log(`chain: NOT VALID: ${err.code}: ${err.message}`);
      process.exitCode = 1;
    }
  } finally {
    await store.close();
  }
}

function ref(text: string, flag: string): RevisionRef {
  const parsed = parseRevisionRefText(text);
  if (!parsed) throw new TypeError(`${flag}: expected object_id@revision_id#sha256:<64 hex>`);
  return parsed;
}

function selectorOf(text: string): ResourceSelector {
  const m = /^([^/@]+)(?:\/([^/@]+)(?:@([^/@]+))?)?$/.exec(text);
  if (!m) throw new TypeError(`--resource: expected project, project/object or project/object@revision, got ${text}`);
  const [, project_id, object_id, revision_id] = m as unknown as [string, string, string | undefined, string | undefined];
  if (object_id === undefined) return { kind: 'project', project_id };
  if (revision_id === undefined) return { kind: 'object', project_id, object_id };
  return { kind: 'revision', project_id, object_id, revision_id };
}
