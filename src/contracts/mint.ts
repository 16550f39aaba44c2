/**
 * Minting an attenuated child contract (RW-003 §8, ADR-0014 "Delegation only
 * narrows"). The parent must come from {@link evaluateChain} — freshly
 * re-evaluated, every ancestor included — and the delegating actor must be
 * the parent's delegatee. The child inherits everything it omits, names the
 * exact parent and root revisions, is one hop deeper, shares the root ledger
 * and embeds its ancestors' attestation links. The core never trusts a
 * child-provided ancestry: lineage is built here, not read from the request.
 *
 * Persisting the child together with its budget reservation is the ledger's
 * job (ADR-0014: "A delegation record and its budget reservation commit
 * together"); this function only returns the signed record.
 */
import { z } from 'zod';
import { invalidRequest, limitExceeded } from '../errors.ts';
import { refOf, summariseIssues } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import { ActorRef, RevisionRef, sameRevision } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';
import type { EvaluatedChain } from './admission.ts';
import { attenuationDenied, compareTerms } from './attenuation.ts';
import { buildChain } from './attestation-chain.ts';
import { ownScopes } from './control-scopes.ts';
import type { IssuedContract } from './issuance.ts';
import { compareHop, rootRefOf } from './lineage.ts';
import { mintedContract, Objective, termsOf, validateBody, type ContractBody, type DelegationContract } from './model.ts';
import { checkRegistered, type ScopeRegistry } from './scope.ts';
import { sealContract, type ContractSigner } from './signing.ts';
import { mergeTerms, TermsRequest } from './terms.ts';

/** What the delegating agent may ask for. Strict: no lineage, issuer or subject fields. */
export const MintRequest = z.strictObject({
  delegatee: z.strictObject({ card_ref: RevisionRef, actor_ref: ActorRef, operator_ref: RevisionRef }),
  objective: Objective,
  purpose: z.string().optional(),
  input_revisions: z.array(RevisionRef).max(256),
  terms: TermsRequest.optional(),
});
export type MintRequest = z.infer<typeof MintRequest>;

export interface MintDeps {
  clock: Clock;
  ids: IdSource;
  signer: ContractSigner;
  registry: ScopeRegistry;
  /** Descendants already minted under `root` (ADR-0014: 32 per root by default). */
  countDescendants(root: RevisionRef): Promise<number>;
}

/** Mints and signs a child of `parent.leaf`, or throws deny listing every failing dimension. */
export async function mintChild(parent: EvaluatedChain, raw: unknown, actor: ActorRef, deps: MintDeps): Promise<IssuedContract> {
  const parsed = MintRequest.safeParse(raw);
  if (!parsed.success) throw invalidRequest('child request is malformed', { issues: summariseIssues(parsed.error) });
  const request = parsed.data;
  const leaf = parent.leaf;
  if (!sameRevision(actor, leaf.body.delegatee_agent_ref.actor_ref)) {
    throw invalidRequest("only the parent's delegatee may delegate under it");
  }
  await checkCounters(leaf, deps);
  const body = childBody(parent, request, actor, deps.ids.next('dlg'));
  const failures = compareHop({ body: leaf.body, ref: refOf(leaf) }, body);
  if (failures.length > 0) throw attenuationDenied(failures);
  checkRegistered(body.scope, deps.registry);
  validateBody(body);
  const contract = mintedContract(await sealContract({ body }, deps));
  return { contract, chain: buildChain([...parent.contracts, contract]) };
}

async function checkCounters(leaf: DelegationContract, deps: MintDeps): Promise<void> {
  const lineage = leaf.body.lineage;
  if (lineage.depth + 1 > lineage.root_max_depth) {
    throw limitExceeded('delegation would exceed the root maximum depth', { bound: 'depth', root_max_depth: lineage.root_max_depth });
  }
  const root = rootRefOf(leaf.body, refOf(leaf));
  if ((await deps.countDescendants(root)) >= lineage.root_max_descendants) {
    throw limitExceeded('root has reached its descendant limit', { bound: 'descendants', root_max_descendants: lineage.root_max_descendants });
  }
}

function childBody(parent: EvaluatedChain, request: MintRequest, actor: ActorRef, delegationId: string): ContractBody {
  const p = parent.leaf.body;
  const terms = mergeTerms(termsOf(p), request.terms ?? {}, { childDepth: true });
  const card = request.delegatee.card_ref;
  return {
    delegation_id: delegationId,
    delegator_actor_ref: actor,
    delegatee_agent_ref: { card_ref: card, actor_ref: request.delegatee.actor_ref },
    accountable_operator_ref: request.delegatee.operator_ref,
    objective: request.objective,
    ...(request.purpose === undefined ? {} : { purpose: request.purpose }),
    input_revisions: request.input_revisions,
    issuer_binding: p.issuer_binding,
    principal_binding: p.principal_binding,
    owner: p.owner,
    lineage: {
      kind: 'child',
      parent_ref: refOf(parent.leaf),
      root_ref: rootRefOf(p, refOf(parent.leaf)),
      depth: p.lineage.depth + 1,
      root_max_depth: p.lineage.root_max_depth,
      root_max_descendants: p.lineage.root_max_descendants,
    },
    ledger_ref: p.ledger_ref,
    ancestry: parent.chain.links,
    ...terms,
    retry_policy: { ...{}, ...terms.retry_policy, idempotency_key: delegationId },
    control_scopes: ownScopes(p.owner.space_id, delegationId, card.object_id, terms.control_scopes),
  };
}

/**
 * The next revision of an existing child, for another delegatee (RW-003
 * §11.4 reassignment: "contract revision D@r2 assigning AGENT-B with the
 * same or narrower scope and remaining budget"). Same delegation id, the
 * revision chained to the current one, still a provable subset of the
 * parent — and no wider than the revision it replaces on any dimension.
 * `budget` caps each dimension at what is left of the delegation's budget.
 */
export async function reviseChild(
  parent: EvaluatedChain,
  current: DelegationContract,
  raw: unknown,
  budget: ReadonlyMap<string, bigint>,
  actor: ActorRef,
  deps: Omit<MintDeps, 'countDescendants'>,
): Promise<DelegationContract> {
  const parsed = MintRequest.safeParse(raw);
  if (!parsed.success) throw invalidRequest('revision request is malformed', { issues: summariseIssues(parsed.error) });
  const request = parsed.data;
  if (!sameRevision(actor, parent.leaf.body.delegatee_agent_ref.actor_ref)) throw invalidRequest("only the parent's delegatee may revise a delegation under it");
  const c = current.body;
  const lineage = c.lineage;
  if (lineage.kind !== 'child' || !sameRevision(lineage.parent_ref, refOf(parent.leaf))) throw invalidRequest('the revision must stay under the same parent revision');
  const terms = mergeTerms(termsOf(c), request.terms ?? {}, { childDepth: false });
  const card = request.delegatee.card_ref;
  // Against the revision it replaces, the delegatee's own agent stream is the one scope that may change.
  const withoutAgent = <S extends { scope_kind: string; scope_id: string }>(scopes: readonly S[], cardId: string) => scopes.filter((s) => !(s.scope_kind === 'agent' && s.scope_id === cardId));
  const body: ContractBody = {
    ...{}, ...c,
    delegatee_agent_ref: { card_ref: card, actor_ref: request.delegatee.actor_ref },
    accountable_operator_ref: request.delegatee.operator_ref,
    objective: request.objective,
    input_revisions: request.input_revisions,
    ancestry: parent.chain.links,
    ...terms,
    // "with the remaining budget": no dimension above what the delegation has left.
    budget_ceilings: terms.budget_ceilings.map((b) => {
      const left = budget.get(b.name);
      return left !== undefined && BigInt(b.ceiling) > left ? { ...{}, ...b, ceiling: left.toString() } : b;
    }),
    // The delegatee's own agent stream replaces the old one; every other fenced scope stays.
    control_scopes: ownScopes(c.owner.space_id, c.delegation_id, card.object_id, withoutAgent(terms.control_scopes, c.delegatee_agent_ref.card_ref.object_id)),
  };
  const termsWithoutAgent = (t: ReturnType<typeof termsOf>, cardId: string) => ({ ...{}, ...t, control_scopes: withoutAgent(t.control_scopes, cardId) });
  const failures = [
    ...compareHop({ body: parent.leaf.body, ref: refOf(parent.leaf) }, body),
    ...compareTerms(termsWithoutAgent(termsOf(c), c.delegatee_agent_ref.card_ref.object_id), termsWithoutAgent(termsOf(body), card.object_id), 'same'),
  ];
  if (failures.length > 0) throw attenuationDenied(failures, { revision_of: current.revision_id });
  checkRegistered(body.scope, deps.registry);
  validateBody(body);
  return mintedContract(await sealContract({ body, prior: refOf(current) }, deps));
}
