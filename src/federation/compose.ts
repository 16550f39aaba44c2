/** Builds the Federation from configuration: every caller with a head-statement URL is a separate-store upstream. */
import type { Config } from '../config.ts';
import type { Keyring } from '../keys/keyring.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { systemClock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import { Federation, type FederationDeps, type UpstreamLink } from './federation.ts';

export function federationOf(config: Config, deps: { store: Store; keyring: Keyring; self: string; actorRef: ActorRef; escalate?: FederationDeps['escalate'] }): Federation {
  const upstreams: UpstreamLink[] = config.callers.flatMap((c) =>
    c.upstream?.headsUrl
      ? [{ actorObjectId: c.upstream.actorObjectId, contractJwksFile: c.upstream.contractJwksFile, headsUrl: c.upstream.headsUrl, auth: c.upstream.auth, maxStalenessMs: c.upstream.maxStalenessMs, ancestors: (c.upstream.ancestors ?? []).map((a) => a.actorObjectId) }]
      : [],
  );
  const downstreams = config.callers.flatMap((c) => (c.downstream ? [{ actorObjectId: c.downstream.actorObjectId, notifyUrl: c.downstream.notifyUrl, contractJwksFile: c.downstream.contractJwksFile }] : []));
  return new Federation({
    ...{}, ...deps,
    clock: systemClock,
    spaceId: config.spaceId,
    upstreams,
    downstreams,
    servedStalenessMs: config.federation.servedStalenessMs,
    timeoutMs: config.federation.timeoutMs,
  });
}
