/**
 * Revocation-to-refusal latency at separate-store downstreams (issues #16, 25):
 *   tsx bench/federation-revocation.ts '{"rounds":5}'
 * Two, then three real Baton processes on their own SQLite stores and a real SDK agent.
 * Each round streams a slow task A → B → agent, revokes A's root with the
 * CLI while the agent works, then reads from the stores when A recorded
 * the revocation and when B (and C, three hops) tripped its copy of the
 * delegation stream on the signed notice (one clock: every process runs on this host). From that
 * instant B refuses every new effect under the chain on its local fence,
 * whatever its statement staleness. Prints one JSON line; asserts nothing.
 */
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { textPart } from '../e2e/agents/card.ts';
import { sentChain } from '../e2e/agents/testlog.ts';
import { startFederation } from '../e2e/gateway/federation.ts';
import { streamActingAtWorking } from '../e2e/gateway/mid-stream.ts';
import { pollUntil } from '../e2e/harness/process.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import type { Store } from '../src/store/port.ts';

const rounds = Math.min(20, Math.max(1, Number((JSON.parse(process.argv[2] ?? '{}') as { rounds?: number }).rounds ?? 5)));
const send = (text: string) => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: undefined,
  metadata: undefined,
});

async function lastEventAt(open: () => Promise<Store>, space: string, delegation: string): Promise<string | undefined> {
  const s = await open();
  try {
    const events = await s.control.readStream({ project_id: `rw-control:${space}`, branch_id: `delegation:${delegation}` });
    return events.at(-1)?.recorded_at;
  } finally {
    await s.close();
  }
}

/**
 * One federation of `hops` organisations: per round, A's revocation event →
 * each downstream's trip of its copy of the delegation it was given (B: A's
 * leaf, chain[1]; C: B's leaf, chain[2]). From its trip on, that gateway
 * refuses every new effect under the chain on its local fence.
 */
async function measure(hops: 2 | 3): Promise<Record<string, number[]>> {
  const fed = await startFederation({ hops, presetA: { maxInvocations: 100, maxActiveRoots: 100 } });
  const out: Record<string, number[]> = Object.fromEntries(fed.orgs.slice(1).map((o) => [o.name, []]));
  try {
    for (let i = 0; i < rounds; i++) {
      const client = await fed.client();
      let root = '';
      await streamActingAtWorking(client, send(`slow round ${i}`), async (r) => {
        root = r;
        await batonCli(['control', 'revoke', r, '--reason', 'bench: org A revokes'], { BATON_CONFIG: fed.orgs[0]!.config, BATON_LOG_LEVEL: 'silent' });
      });
      const log = await fed.agent.log();
      const sent = [...log.requests].reverse().find((r) => r.method === 'SendStreamingMessage' || r.method === 'SendMessage')!;
      const chain = sentChain<{ record_id: string }>(sent)!;
      const revokedAt = await lastEventAt(() => fed.orgs[0]!.store(), 'space_a', root);
      for (let k = 1; k < hops; k++) {
        const org = fed.orgs[k]!;
        const trippedAt = await pollUntil(() => lastEventAt(() => org.store(), 'space_a', chain[k]!.record_id), (at) => at !== undefined && at >= (revokedAt ?? ''), { what: `the trip at ${org.name}`, polls: 400 });
        out[org.name]!.push(Date.parse(trippedAt!) - Date.parse(revokedAt!));
      }
    }
  } finally {
    await fed.close();
  }
  return out;
}

const stats = (all: number[]) => {
  const sorted = [...all].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1), all };
};
const two = await measure(2);
const three = await measure(3);
console.log(
  JSON.stringify({
    bench: 'federation-revocation',
    rounds,
    revocation_to_refusal_ms: { b_of_two: stats(two.b!), b_of_three: stats(three.b!), c_of_three: stats(three.c!) },
    note: "A's revocation event → each downstream's local trip (it refuses from then on); includes A's revocation sweep (revocationSweepMs, default 500 ms); C hears A's notice through B",
  }),
);
