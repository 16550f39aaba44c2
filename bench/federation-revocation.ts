/**
 * Revocation-to-refusal latency at a separate-store downstream (issue #16):
 *   tsx bench/federation-revocation.ts '{"rounds":5}'
 * Two real Baton processes on their own SQLite stores and a real SDK agent.
 * Each round streams a slow task A → B → agent, revokes A's root with the
 * CLI while B's agent works, then reads from the two stores when A recorded
 * the revocation and when B tripped its copy of the delegation stream on A's
 * signed notice (one clock: both processes run on this host). From that
 * instant B refuses every new effect under the chain on its local fence,
 * whatever its statement staleness. Prints one JSON line; asserts nothing.
 */
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { textPart } from '../e2e/agents/card.ts';
import { startFederation } from '../e2e/gateway/federation.ts';
import { streamActingAtWorking } from '../e2e/gateway/mid-stream.ts';
import { pollUntil } from '../e2e/harness/process.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import type { Store } from '../src/store/port.ts';

const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
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

const fed = await startFederation({ presetA: { maxInvocations: 100, maxActiveRoots: 100 } });
const latencies: number[] = [];
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
    const leaf = (sent.messageMetadata as Record<string, { chain: Array<{ record_id: string }> }>)[CONTRACT_EXT]!.chain[1]!.record_id;
    const revokedAt = await lastEventAt(() => fed.orgs[0]!.store(), 'space_a', root);
    const trippedAt = await pollUntil(() => lastEventAt(() => fed.orgs[1]!.store(), 'space_a', leaf), (at) => at !== undefined && at >= (revokedAt ?? ''), { what: 'the trip at B', polls: 400 });
    latencies.push(Date.parse(trippedAt!) - Date.parse(revokedAt!));
  }
} finally {
  await fed.close();
}
const sorted = [...latencies].sort((a, b) => a - b);
console.log(JSON.stringify({ bench: 'federation-revocation', rounds, revocation_to_refusal_ms: { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1), all: latencies }, note: "A's revocation event → B's local trip (B refuses from then on); includes A's revocation sweep (revocationSweepMs, default 500 ms)" }));
