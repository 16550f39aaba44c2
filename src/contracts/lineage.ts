/**
 * The rules one parent → child hop must satisfy beyond term attenuation
 * (RW-003 §8, ADR-0014 "Delegation only narrows"): issuer, subject, access
 * domain and ledger unchanged; the child is delegated by the parent's
 * delegatee to an eligible delegate; lineage names the exact parent and root
 * revisions, one hop deeper, under the root's bounds. Used both when minting
 * and, again, for every hop at admission.
 */
import { canonicalText } from '../records/canonical.ts';
import { sameRevision, type RevisionRef } from '../records/revision-ref.ts';
import { compareTerms, type AttenuationFailure } from './attenuation.ts';
import { termsOf, type ContractBody } from './model.ts';

const same = (a: unknown, b: unknown): boolean => canonicalText(a) === canonicalText(b);

/** The root revision a contract belongs to (itself for a root). */
export function rootRefOf(body: ContractBody, selfRef: RevisionRef): RevisionRef {
  return body.lineage.kind === 'root' ? selfRef : body.lineage.root_ref;
}

/** Every failing dimension of the hop `parent` → `child`; empty when valid. */
export function compareHop(parent: { body: ContractBody; ref: RevisionRef }, child: ContractBody): AttenuationFailure[] {
  const failures = compareTerms(termsOf(parent.body), termsOf(child), 'child');
  const fail = (dimension: string, reason: string): void => void failures.push({ dimension, reason });
  const p = parent.body;
  if (!same(p.issuer_binding, child.issuer_binding)) fail('issuer', 'child changes the issuer binding');
  if (!same(p.principal_binding, child.principal_binding)) fail('subject', 'child changes the subject');
  if (!same(p.owner, child.owner)) fail('domain', 'child changes the owner namespace or access domain');
  if (p.ledger_ref !== child.ledger_ref) fail('ledger', 'child does not share the root ledger');
  if (!sameRevision(p.delegatee_agent_ref.actor_ref, child.delegator_actor_ref)) {
    fail('delegator', "child is not delegated by the parent's delegatee");
  }
  const eligible = p.subdelegation_policy.eligible_delegate_cards;
  if (eligible && !eligible.includes(child.delegatee_agent_ref.card_ref.object_id)) {
    fail('delegatee', 'delegatee card is not eligible under the parent policy');
  }
  lineageRules(parent, child, fail);
  return failures;
}

function lineageRules(parent: { body: ContractBody; ref: RevisionRef }, child: ContractBody, fail: (d: string, r: string) => void): void {
  const pl = parent.body.lineage;
  const cl = child.lineage;
  if (cl.kind !== 'child') return fail('lineage', 'a sub-delegated contract must name its parent');
  if (!sameRevision(cl.parent_ref, parent.ref)) fail('lineage', 'child does not name the exact parent revision');
  if (!sameRevision(cl.root_ref, rootRefOf(parent.body, parent.ref))) fail('lineage', 'child does not name the exact root revision');
  if (cl.root_max_depth !== pl.root_max_depth || cl.root_max_descendants !== pl.root_max_descendants) {
    fail('lineage', 'child changes the root bounds');
  }
  if (cl.depth !== pl.depth + 1) fail('depth', `child depth ${cl.depth} is not parent depth + 1`);
  if (cl.depth > pl.root_max_depth) fail('depth', `depth ${cl.depth} exceeds the root maximum ${pl.root_max_depth}`);
}
