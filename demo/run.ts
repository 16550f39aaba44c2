/**
 * `npm run demo`: the two-organisation scenario on loopback. Org A's Baton
 * delegates to org B's Baton, which delegates to B's agent; then one Baton in
 * front of an agent whose read-back contradicts its claim; then one MCP tool
 * call through Baton, read back through the tool's read route (./mcp-hop.ts).
 * Tasks are sent with the stock @a2a-js/sdk client, the tool call with the
 * official MCP SDK client; the demo prints what Baton recorded — the
 * delegation tree with the shared root budget, outcomes and the verification
 * receipts of every hop. Everything lives in temporary directories.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { partsText, textPart } from '../e2e/agents/card.ts';
import { startWorld } from '../e2e/gateway/world.ts';
import { startTwoOrgs } from '../e2e/gateway/two-orgs.ts';
import { renderLedgerTree } from '../src/ledger/render.ts';
import type { Store } from '../src/store/port.ts';
import { mcpHop } from './mcp-hop.ts';

const OUTCOME = 'urn:baton:outcome:v2';
const say = (s = '') => process.stdout.write(`${s}\n`);

async function ask(client: Client, text: string): Promise<Task> {
  return (await client.sendMessage({
    tenant: '',
    message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined,
    metadata: undefined,
  })) as Task;
}

async function report(task: Task, store: Store): Promise<void> {
  const meta = task.metadata?.[OUTCOME] as { outcome: string; verified: boolean; rootDelegationId: string };
  say(`  Baton task ${task.id}: ${TaskState[task.status!.state]}, outcome ${meta.outcome} (verified: ${meta.verified})`);
  if (task.artifacts[0]) say(`  artifact ${JSON.stringify(partsText(task.artifacts[0].parts))}`);
  say('  delegation tree and budget (root first):');
  for (const line of renderLedgerTree((await store.ledger.tree(meta.rootDelegationId))!).split('\n')) say(`    ${line}`);
  const receipts = (await store.listCurrent('rw-agent-delegation/0.1.1#verification_receipt', { limit: 50 })).records;
  const chain = new Set<string>();
  for (let n = (await store.ledger.tree(meta.rootDelegationId))!; n; n = n.children[0]!) {
    chain.add(n.node_id);
    if (n.children.length === 0) break;
  }
  for (const r of receipts.reverse()) {
    const b = r.body as { delegation_ref: { object_id: string }; readback: string; reasons: string[]; expected?: { state: string }; observed?: { state: string } };
    if (!chain.has(b.delegation_ref.object_id)) continue;
    say(`  receipt ${r.record_id} for ${b.delegation_ref.object_id}: read-back ${b.readback}; claimed ${b.expected?.state ?? '-'}, re-read ${b.observed?.state ?? '-'}`);
    say(`          ${b.reasons.join('; ')}`);
  }
}

say('== Two organisations: A → B → agent ==');
const orgs = await startTwoOrgs();
try {
  say(`org A gateway ${orgs.a.ready.url}   org B gateway ${orgs.b.ready.url}   B's agent ${orgs.agent.url}`);
  const task = await ask(await orgs.client(), 'hello from org A');
  const store = await orgs.store();
  try {
    await report(task, store);
  } finally {
    await store.close();
  }
} finally {
  await orgs.close();
}

say();
say('== One gateway, an agent whose read-back contradicts its claim ==');
const world = await startWorld({ agents: { braggart: { behaviour: 'lying-readback' } } });
try {
  const task = await ask(await world.client('braggart'), 'hello braggart');
  const store = world.store();
  try {
    await report(task, store);
    say(`  reservations held for reconciliation: ${(await store.ledger.unresolved(100)).length} (\`baton reconcile\` settles them on a real gateway)`);
  } finally {
    await store.close();
  }
} finally {
  await world.close();
}

say();
say('== One gateway in front of an MCP server: a tool call read back through its read route ==');
await mcpHop(say);
