/**
 * `npm run demo`: one organisation's Baton in front of two real A2A agents on
 * loopback — an honest one and one whose read-back contradicts its claim.
 * Sends a task to each with the stock @a2a-js/sdk client and prints what
 * Baton recorded: the delegation tree with budgets, the outcomes and the
 * verification receipts. Everything lives in a temporary directory.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { renderLedgerTree } from '../src/ledger/render.ts';
import { textPart, partsText } from '../e2e/agents/card.ts';
import { startWorld } from '../e2e/gateway/world.ts';

const OUTCOME = 'urn:baton:outcome:v1';
const say = (s = '') => process.stdout.write(`${s}\n`);

const world = await startWorld({ agents: { translator: { behaviour: 'honest', stepMs: 30 }, braggart: { behaviour: 'lying-readback' } } });
try {
  say(`Baton gateway: ${world.url}`);
  for (const [id, a] of Object.entries(world.agents)) say(`  delegatee ${id.padEnd(10)} ${a.url}  (served by Baton at ${world.url}/agents/${id}/)`);
  say();
  for (const id of ['translator', 'braggart']) {
    const client = await world.client(id);
    const task = (await client.sendMessage({
      tenant: '',
      message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(`hello from the demo to ${id}`)], metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    const meta = task.metadata?.[OUTCOME] as { outcome: string; verified: boolean; root_delegation_id: string; receipt: { object_id: string } };
    say(`→ ${id}: Baton task ${task.id}`);
    say(`  state     ${TaskState[task.status!.state]}`);
    say(`  outcome   ${meta.outcome} (verified: ${meta.verified})`);
    if (task.artifacts[0]) say(`  artifact  ${JSON.stringify(partsText(task.artifacts[0].parts))}`);
    const store = world.store();
    try {
      const tree = await store.ledger.tree(meta.root_delegation_id);
      say('  delegation tree and budget:');
      for (const line of renderLedgerTree(tree!).split('\n')) say(`    ${line}`);
      const receipt = await store.getRecord(meta.receipt.object_id);
      const b = receipt?.body as { readback: string; reasons: string[]; expected?: { state: string }; observed?: { state: string } };
      say(`  receipt   ${meta.receipt.object_id}: read-back ${b.readback}; claimed ${b.expected?.state ?? '-'}, re-read ${b.observed?.state ?? '-'}`);
      say(`            ${b.reasons.join('; ')}`);
    } finally {
      await store.close();
    }
    say();
  }
  const store = world.store();
  const held = await store.ledger.unresolved(100);
  await store.close();
  say(`Reservations held for reconciliation: ${held.length} (\`baton reconcile\` settles them on a real gateway; this demo's store is temporary)`);
} finally {
  await world.close();
}
