/**
 * The demo's MCP hop (demo/mcp-hop.ts, `npm run demo`): one tools/call through
 * a real Baton process to a real SDK MCP server is verified by its read route,
 * and what the demo prints is what Baton recorded.
 */
import { describe, expect, it } from 'vitest';
import { mcpHop } from '../demo/mcp-hop.ts';

describe('demo: the MCP hop', () => {
  it('prints a create_note call projected succeeded and verified, with its read-route receipt and the server calls', async () => {
    const printed: string[] = [];
    const hop = await mcpHop((s = '') => void printed.push(s));
    expect(hop.meta).toMatchObject({ outcome: 'succeeded', verified: true });
    expect(hop.receipt).toMatchObject({ profile: 'mcp-read-route/1', readback: 'agreed', outcome: 'succeeded', reasons: ['read route agrees; acceptance passed'] });
    // The server saw the call and exactly one read: get_note, Baton's read route.
    expect(hop.serverCalls).toEqual({ create_note: 1, get_note: 1 });
    expect(hop.text).toMatch(/^created n-/);
    expect(printed).toContain(`  Baton attempt ${hop.meta.attemptId}: outcome succeeded (verified: true)`);
    expect(printed).toContain(`  receipt ${hop.meta.receipt!.objectId}: profile mcp-read-route/1, read-back agreed, outcome succeeded`);
    expect(printed.some((l) => /^ {4}└─ dlg_\S+ {2}\(depth 1, /.test(l))).toBe(true);
  });
});
