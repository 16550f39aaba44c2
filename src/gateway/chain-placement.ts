/**
 * Where the contract chain Baton attaches for a delegatee travels (issue #24,
 * "fewer or smaller documents per call"). In the message's `metadata` an A2A
 * agent keeps it: the task's `history` holds the message as received, so the
 * chain (two signed contracts, about 10 KB) came back in the first stream event
 * and again in the read-back of every call, each parsed and the read-back
 * digested whole, and it stayed in the delegatee's task store for good. In the
 * request's own `metadata` (SendMessageRequest.metadata, A2A §3.2.1) it is
 * addressed to the agent for this call and is not part of the task.
 *
 * The placement is the delegatee's to say, in its card's entry for the
 * extension: `params.chainPlacement: "request"` (what Baton's own proxy cards
 * declare; a Baton reads either). A card that declares the extension without
 * it was written for the message's placement (a gateway from before this
 * change), so it gets that. A card that does not declare the extension makes
 * no claim on the chain at all: it gets the request's.
 */
import type { AgentExtensionJson } from '../cards/a2a-card.ts';
import { CONTRACT_EXTENSION } from './present.ts';

export type ChainPlacement = 'request' | 'message';

/** The extension params a card sets to take the chain in the request's metadata. */
export const REQUEST_PLACEMENT = { chainPlacement: 'request' } as const;

/** The placement a delegatee's card asks for (see above). */
export function chainPlacementOf(card: { capabilities?: { extensions?: readonly AgentExtensionJson[] | undefined } | undefined }): ChainPlacement {
  const declared = card.capabilities?.extensions?.find((e) => e.uri === CONTRACT_EXTENSION);
  if (!declared) return 'request';
  return declared.params?.chainPlacement === REQUEST_PLACEMENT.chainPlacement ? 'request' : 'message';
}
