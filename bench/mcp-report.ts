/**
 * The MCP phase in bench/RESULTS.md (bench/mcp.ts): its own section, and one
 * reported line in the targets table beside the A2A gateway CPU (issue #26
 * sets no target for it: the figure is reported, not judged).
 */
import type { HttpResults } from './http.ts';
import type { McpResults, McpRow, McpTool } from './mcp.ts';

/** A row of the targets table (bench/report.ts `Target`). */
interface TargetLine {
  name: string;
  goal: string;
  measured: string;
  pass: boolean;
  distance: string;
  reported?: boolean;
  unmeasured?: boolean;
}

const f = (x: number | undefined, d = 1) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));
const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
const header = (cells: string[]) => `${row(cells)}\n${row(cells.map((_, i) => (i === 0 ? '---' : '---:')))}`;
const TOOL_NAMES: Record<McpTool, string> = { create_note: '`create_note` + read route `get_note`', echo: '`echo` (observed, no read route)' };

export function findMcp(mcp: McpResults, route: McpRow['route'], tool: McpTool, c: number): McpRow | undefined {
  return mcp.rows.find((r) => r.route === route && r.tool === tool && r.concurrency === c);
}

const levels = (mcp: McpResults) => mcp.concurrencies.map((c) => `c=${c}`).join(' / ');

/** Baton's CPU per call for each tool at each concurrency, e.g. "create_note … 9.10 / 7.20 ms". */
function gatewayCpu(mcp: McpResults): string {
  const per = (tool: McpTool) => mcp.concurrencies.map((c) => f(findMcp(mcp, 'baton', tool, c)?.cpuMsPerCall.gateway, 2)).join(' / ');
  return `${TOOL_NAMES.create_note} ${per('create_note')} ms; ${TOOL_NAMES.echo} ${per('echo')} ms`;
}

/** The targets-table line: reported beside "Gateway CPU per delegated SendMessage", never pass or miss. */
export function mcpTarget(mcp: McpResults | undefined): TargetLine {
  const name = 'Gateway CPU per MCP tools/call, c=1 / c=8';
  if (!mcp || mcp.rows.length === 0) return { name, goal: 'reported (no target)', measured: 'not measured', pass: false, distance: 'the MCP phase did not run (see notes)', unmeasured: true };
  return {
    name: `Gateway CPU per MCP tools/call, ${levels(mcp)}`,
    goal: 'reported (no target)',
    measured: `${gatewayCpu(mcp)} (utime+stime / calls)`,
    pass: true,
    reported: true,
    distance: '–',
  };
}

const mcpBursts = (mcp: McpResults) =>
  mcp.rows
    .filter((x) => x.route === 'baton' && x.jitWarm)
    .map((x) => `${x.jitWarm!.requests} before ${x.tool} at c=${x.concurrency}${x.jitWarm!.errors ? ` (${x.jitWarm!.errors} errors)` : ''}`)
    .join(', ') || 'none';

/** The section: direct vs Baton per tool and concurrency, with Baton's ratio and added p50 against direct. */
export function renderMcp(mcp: McpResults, http: HttpResults): string[] {
  const t = mcp.timing;
  const out: string[] = ['## MCP tools/call: direct vs Baton', ''];
  out.push(
    'One SDK MCP server (bench/mcp-server.ts: the official `McpServer` over Streamable HTTP with session ids and JSON responses, three tools, no bookkeeping) as its own process, called directly and through Baton\'s `/mcp/notes` (README "Putting an MCP server behind Baton": admitted under a fresh root and child, forwarded, read back, verdict and settlement). ' +
      'Each phase opens one session with the SDK client (initialize, notifications/initialized), then runs N closed loops of JSON-RPC `tools/call` in that session over the A2A phases\' undici load generator. ' +
      'Through Baton, `create_note` is read back through `get_note` (two server calls per call; outcome `succeeded`, `verified: true`); `echo` has no read route (`verified: false`, receipt profile `mcp-observed/1`). Success = a tool result that is not an error, and through Baton that outcome. ' +
      `Per concurrency, a fresh server and a fresh Baton (fresh SQLite data dir); per phase ${t.jitWarm ? `first a burst at c=32 of up to ${t.jitWarm.requests} calls (${t.jitWarm.ms / 1000} s at most; through Baton it served ${mcpBursts(mcp)}) to get past the JIT warm-up, then ` : ''}${t.warmupMs / 1000} s warm-up (at least ${t.minWarm} calls, time-bounded), then ${t.durationMs / 1000} s measured; CPU as in the A2A table.` +
      (mcp.only ? ` Measured alone by \`BENCH_ONLY=mcp\` on ${mcp.date}, not in the same run as the sections around it.` : ''),
    '',
  );
  out.push(header(['Tool', 'Route', 'c', 'calls/s', 'p50 ms', 'p99 ms', 'calls', 'errors', 'gateway CPU ms/call', 'server CPU ms/call', 'client CPU ms/call', 'calls/s vs direct', 'added p50 ms']));
  for (const x of mcp.rows) {
    const direct = findMcp(mcp, 'direct', x.tool, x.concurrency);
    const vs = x.route === 'baton' && direct ? `${f((x.rps / direct.rps) * 100)} %` : '–';
    const added = x.route === 'baton' && direct ? f(x.p50Ms - direct.p50Ms, 2) : '–';
    out.push(
      row([
        TOOL_NAMES[x.tool],
        x.route === 'baton' ? 'Baton' : 'direct',
        x.concurrency,
        f(x.rps),
        f(x.p50Ms, 2),
        f(x.p99Ms, 2),
        `${x.requests}${x.capped ? ' (capped)' : ''}`,
        x.errors ? `${x.errors}: ${x.errorSample ?? ''}` : '0',
        f(x.cpuMsPerCall.gateway, 2),
        f(x.cpuMsPerCall.server, 2),
        f(x.cpuMsPerCall.client, 2),
        vs,
        added,
      ]),
    );
  }
  const a2a = (c: number) => http.rows.find((r) => r.route === 'baton' && r.concurrency === c)?.cpuMsPerRequest.proxy;
  const beside = a2a(1) === undefined && a2a(32) === undefined ? '' : `; per delegated A2A SendMessage ${f(a2a(1), 2)} ms at c=1, ${f(a2a(32), 2)} ms at c=32 (table above)`;
  out.push('', `Gateway CPU per tools/call (${levels(mcp)}): ${gatewayCpu(mcp)}${beside}.`, '');
  return out;
}
