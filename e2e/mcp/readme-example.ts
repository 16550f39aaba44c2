/**
 * The README's "Putting an MCP server behind Baton" example, parsed as the
 * gateway parses config: the MCP e2e tests configure their server from it.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export function readmeExample(): { mcpServers: unknown[]; presets: unknown[] } {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Putting an MCP server behind Baton'));
  return parse(/```yaml\n([\s\S]*?)```/.exec(section)![1]!) as { mcpServers: unknown[]; presets: unknown[] };
}

/**
 * The notes server (./notes-server.ts) configured as the README example
 * configures its server: its `create_note` policy (read back through
 * `get_note`), a liar read back the same way, an observed `echo`, a gated
 * `delete_all`, then `extra` policies.
 */
export function notesServerConfig(url: string, extra: Array<Record<string, unknown>> = []): Record<string, unknown> {
  const example = readmeExample().mcpServers[0] as Record<string, unknown> & { tools: Array<{ name: string; readRoute?: unknown }> };
  const create = example.tools.find((t) => t.name === 'create_note')!;
  return {
    ...example,
    url,
    allowHttp: true,
    auth: undefined,
    tools: [create, { name: 'lying_create', requireApproval: false, readRoute: create.readRoute }, { name: 'echo', requireApproval: false }, { name: 'delete_all' }, ...extra],
  };
}
