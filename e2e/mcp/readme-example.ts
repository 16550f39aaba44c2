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
