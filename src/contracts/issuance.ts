/**
 * Trusted issuance of root contracts (ADR-0014 "Decision", "Issuance and the
 * local baseline"). Authority comes from exactly one owner-selected source:
 * an owner preset, a human grant record, or a registered issuer's grant.
 * The caller's request may only narrow that source; it can never name the
 * issuer, actor, subject, lineage or another task, and its purpose text is
 * stored for audit but never evaluated.
 */
import { z } from 'zod';
import { BatonError, invalidRequest, limitExceeded, unavailable } from '../errors.ts';
import { canonicalText } from '../records/canonical.ts';
import { summariseIssues } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { RevisionRef, sameRevision, type ActorRef } from '../records/revision-ref.ts';
import { utc, type Clock } from '../records/time.ts';
import { attenuate, attenuationDenied, type AttenuationFailure } from './attenuation.ts';
import { linkOf, type DelegationAttestationChain } from './attestation-link.ts';
import { acceptGrant, type GrantDeps } from './grant.ts';
import { DELEGATION_DEFAULTS, mintedContract, Objective, validateBody, type ContractBody, type DelegationContract, type IssuerBinding, type OwnerBinding, type PrincipalBinding } from './model.ts';
import { DEFAULT_MAX_LIFETIME_SECONDS, presetRef, type CeilingTerms, type DelegateeOption, type Preset } from './presets.ts';
import { checkRegistered, type ScopeRegistry } from './scope.ts';
import { sealContract, type ContractSigner } from './signing.ts';
import { TermsRequest, type Terms } from './terms.ts';
import { ownScopes } from './control-scopes.ts';

/** What an untrusted caller may send. Strict: `issuer`, `actor`, `subject`, `parent_ref`… are rejected. */
export const IssueRequest = z.strictObject({
  /** Required by grant profiles; refused by preset profiles. */
  grant_ref: RevisionRef.optional(),
  delegatee_card_ref: RevisionRef,
  objective: Objective,
  purpose: z.string().optional(),
  input_revisions: z.array(RevisionRef).max(256),
  terms: TermsRequest.optional(),
});
export type IssueRequest = z.infer<typeof IssueRequest>;

/** The owner-configured issuance path of an entry point (ADR-0014 "Machine callers"). */
export type EntryPointProfile =
  | { path: 'owner_preset'; preset: Preset }
  | { path: 'human_grant' }
  | { path: 'registered_issuer' };

/** Core-derived identity of the caller; never read from the request. */
export interface TrustedCaller {
  actor: ActorRef;
  subject: PrincipalBinding;
}

export interface IssuanceDeps {
  clock: Clock;
  ids: IdSource;
  signer: ContractSigner;
  owner: OwnerBinding;
  registry: ScopeRegistry;
  /** Explicit owner config may raise the one-hour task lifetime (ADR-0014 bounds). */
  maxLifetimeSeconds?: number;
  delegationBounds?: { maxDepth: number; maxDescendants: number };
  /** Grant lookup and acceptance; required by grant profiles. */
  grants?: GrantDeps & { lookup(ref: RevisionRef): Promise<unknown> };
  /** ADR-0014 active-root and creation-rate limits; required for machine presets. */
  issuanceCounters?: { activeRoots(presetId: string): Promise<number>; issuedSince(presetId: string, since: Date): Promise<number> };
}

export interface IssuedContract {
  contract: DelegationContract;
  chain: DelegationAttestationChain;
}

interface Source {
  binding: IssuerBinding;
  terms: CeilingTerms;
  notAfter: number;
  delegatees: readonly DelegateeOption[];
  objectiveTypes: readonly string[];
  delegator: ActorRef;
}

/** Issues a signed root contract, or throws the ADR-0014 diagnostic. */
export async function issueContract(raw: unknown, caller: TrustedCaller, profile: EntryPointProfile, deps: IssuanceDeps): Promise<IssuedContract> {
  const parsed = IssueRequest.safeParse(raw);
  if (!parsed.success) throw invalidRequest('issuance request is malformed', { issues: summariseIssues(parsed.error) });
  const request = parsed.data;
  const source = profile.path === 'owner_preset' ? await fromPreset(profile.preset, request, caller, deps) : await fromGrant(profile.path, request, caller, deps);
  const delegationId = deps.ids.next('dlg');
  const { terms, delegatee } = narrow(source, request, delegationId, deps);
  const body = rootBody({ delegationId, source, request, delegatee, terms, caller, deps });
  validateBody(body);
  const contract = mintedContract(await sealContract({ body }, deps));
  const link = linkOf(contract);
  return { contract, chain: { root_ref: link.contract_ref, leaf_ref: link.contract_ref, links: [link] } };
}

async function fromPreset(preset: Preset, request: IssueRequest, caller: TrustedCaller, deps: IssuanceDeps): Promise<Source> {
  if (request.grant_ref) throw invalidRequest('this entry point issues from its preset; a grant reference cannot select other authority');
  await checkIssuanceRate(preset, deps);
  const now = deps.clock.now().getTime();
  return {
    binding: { path: 'owner_preset', issuer_id: deps.signer.actorRef.object_id, evidence_ref: presetRef(preset) },
    terms: preset.terms,
    notAfter: now + lifetimeMs(preset.terms.limits.lifetime_seconds, deps),
    delegatees: preset.eligible_delegatees,
    objectiveTypes: preset.objective_types,
    delegator: preset.delegator_actor_ref ?? caller.actor,
  };
}

async function fromGrant(path: 'human_grant' | 'registered_issuer', request: IssueRequest, caller: TrustedCaller, deps: IssuanceDeps): Promise<Source> {
  // ADR-0014: a missing required grant is interaction_required, never a silent preset.
  if (!request.grant_ref) throw interactionRequired('this entry point requires a human grant', { path });
  if (!deps.grants) throw unavailable('grant store is not configured');
  const raw = await deps.grants.lookup(request.grant_ref);
  if (raw === undefined) throw interactionRequired('no such grant exists; a person must grant this scope', { path });
  const grant = await acceptGrant(raw, request.grant_ref, deps.grants);
  const kind = grant.body.grantor.kind;
  if ((path === 'human_grant') !== (kind === 'human')) throw invalidRequest(`this entry point does not accept a ${kind} grant`);
  if (!sameRevision(grant.body.grantee_actor_ref, caller.actor) || !sameJson(grant.body.subject, caller.subject)) {
    throw invalidRequest('grant is bound to another actor or subject');
  }
  if (!sameJson(grant.body.owner, deps.owner)) throw invalidRequest('grant belongs to another owner or access domain');
  const issuerId = grant.body.grantor.kind === 'registered_issuer' ? grant.body.grantor.issuer_id : deps.signer.actorRef.object_id;
  const now = deps.clock.now().getTime();
  return {
    binding: { path, issuer_id: issuerId, evidence_ref: grant.ref },
    terms: grant.body.terms,
    notAfter: Math.min(now + lifetimeMs(grant.body.terms.limits.lifetime_seconds, deps), Date.parse(grant.body.not_after)),
    delegatees: grant.body.eligible_delegatees,
    objectiveTypes: grant.body.objective_types,
    delegator: caller.actor,
  };
}

function lifetimeMs(seconds: number, deps: IssuanceDeps): number {
  return Math.min(seconds, deps.maxLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_SECONDS) * 1000;
}

async function checkIssuanceRate(preset: Preset, deps: IssuanceDeps): Promise<void> {
  const counters = deps.issuanceCounters;
  if (!counters) {
    // An unavailable coordinator never falls back to unbounded issuance.
    if (preset.kind === 'machine') throw unavailable('issuance counters are unavailable for a machine preset');
    return;
  }
  if ((await counters.activeRoots(preset.preset_id)) >= preset.issuance.max_active_roots) {
    throw limitExceeded('preset has reached its active-root limit', { bound: 'active_roots' });
  }
  const since = new Date(deps.clock.now().getTime() - 60_000);
  if ((await counters.issuedSince(preset.preset_id, since)) >= preset.issuance.max_per_minute) {
    throw limitExceeded('preset has reached its issuance rate', { bound: 'issuance_rate' });
  }
}

/** Proves the request within the source and picks the delegatee; deny lists every failure. */
function narrow(source: Source, request: IssueRequest, delegationId: string, deps: IssuanceDeps): { terms: Terms; delegatee: DelegateeOption } {
  const ceiling: Terms = {
    ...{}, ...source.terms,
    limits: { ...{}, ...withoutLifetime(source.terms.limits), not_after: utc(new Date(source.notAfter)) },
    retry_policy: { ...{}, ...source.terms.retry_policy, idempotency_key: delegationId },
  };
  const failures: AttenuationFailure[] = [];
  const delegatee = source.delegatees.find((d) => sameRevision(d.card_ref, request.delegatee_card_ref));
  if (!delegatee) failures.push({ dimension: 'delegatee', reason: 'card is not an eligible delegatee of this issuance source' });
  if (!source.objectiveTypes.includes(request.objective.type)) failures.push({ dimension: 'objective', reason: 'objective type is not covered' });
  const result = attenuate(ceiling, request.terms ?? {}, 'same');
  if (!result.ok) failures.push(...result.failures);
  if (failures.length > 0 || !result.ok || !delegatee) throw attenuationDenied(failures);
  checkRegistered(result.terms.scope, deps.registry);
  const scopes = ownScopes(deps.owner.space_id, delegationId, delegatee.card_ref.object_id, result.terms.control_scopes);
  return { terms: { ...{}, ...result.terms, control_scopes: scopes }, delegatee };
}

function withoutLifetime(limits: CeilingTerms['limits']): Omit<CeilingTerms['limits'], 'lifetime_seconds'> {
  const { lifetime_seconds: _l, ...rest } = limits;
  return rest;
}

interface RootParts {
  delegationId: string;
  source: Source;
  request: IssueRequest;
  delegatee: DelegateeOption;
  terms: Terms;
  caller: TrustedCaller;
  deps: IssuanceDeps;
}

function rootBody({ delegationId, source, request, delegatee, terms, caller, deps }: RootParts): ContractBody {
  const bounds = deps.delegationBounds ?? DELEGATION_DEFAULTS;
  return {
    delegation_id: delegationId,
    delegator_actor_ref: source.delegator,
    delegatee_agent_ref: { card_ref: delegatee.card_ref, actor_ref: delegatee.actor_ref },
    accountable_operator_ref: delegatee.operator_ref,
    objective: request.objective,
    ...(request.purpose === undefined ? {} : { purpose: request.purpose }),
    input_revisions: request.input_revisions,
    issuer_binding: source.binding,
    principal_binding: caller.subject,
    owner: deps.owner,
    lineage: { kind: 'root', depth: 0, root_max_depth: bounds.maxDepth, root_max_descendants: bounds.maxDescendants },
    ledger_ref: deps.ids.next('ledger'),
    ancestry: [],
    ...terms,
  };
}

const sameJson = (a: unknown, b: unknown): boolean => canonicalText(a) === canonicalText(b);
const interactionRequired = (message: string, details: Record<string, unknown>): BatonError =>
  new BatonError('interaction_required', message, details);
