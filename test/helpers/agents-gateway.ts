/**
 * A real gateway in this process in front of real SDK agents, each pinned by
 * its JWKS and served at /agents/<id>/, with one API-key caller on the
 * standard preset: the world of the wire-level gateway tests.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { Config } from '../../src/config.ts';
import { startGateway, type Gateway } from '../../src/main.ts';

export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

export interface AgentsGateway {
  gw: Gateway;
  agents: Record<string, RunningAgent>;
  dir: string;
  close(): Promise<void>;
}

/** Starts `agents` (id → startAgent options), then a gateway over them with `config` merged in. */
export async function startAgentsGateway(
  prefix: string,
  callerKey: string,
  agentOptions: Record<string, Parameters<typeof startAgent>[0]>,
  config: Record<string, unknown>,
): Promise<AgentsGateway> {
  const dir = mkdtempSync(join(tmpdir(), `baton-${prefix}-`));
  const agents: Record<string, RunningAgent> = {};
  for (const [id, opts] of Object.entries(agentOptions)) agents[id] = await startAgent(opts);
  const pinned: Record<string, string> = {};
  for (const [id, a] of Object.entries(agents)) {
    writeFileSync(join(dir, `${id}.jwks.json`), JSON.stringify(a.jwks));
    pinned[a.url] = join(dir, `${id}.jwks.json`);
  }
  const gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      logLevel: 'silent',
      callers: [{ id: 'planner', apiKeySha256: sha256Hex(callerKey), preset: 'standard' }],
      delegatees: Object.entries(agents).map(([id, a]) => ({ id, cardUrl: `${a.url}/.well-known/agent-card.json`, allowHttp: true })),
      trust: { pinnedJwks: pinned, jkuAllowedOrigins: [] },
      ...config,
    }),
  );
  return {
    gw,
    agents,
    dir,
    async close() {
      await gw.close();
      for (const a of Object.values(agents)) await a.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
