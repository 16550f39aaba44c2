/** Loopback socket helpers for lifecycle tests. */
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * A port that was free a moment ago on 127.0.0.1, for a process to listen on
 * later. Drawn below the kernel's ephemeral range: a port from `listen(0)` is
 * in that range, and between our close and the child's listen any outgoing
 * connection (other tests run beside this one) could take it as its local
 * port — seen once as EADDRINUSE in e2e/mcp-federation. Below the range only
 * another explicit bind can, and a random draw makes that rare.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let i = 0; i < 100; i++) {
    const port = BELOW_EPHEMERAL_FROM + Math.floor(Math.random() * (low - BELOW_EPHEMERAL_FROM));
    if (await canListen(port)) return port;
  }
  throw new Error('no free port below the ephemeral range after 100 tries');
}

const BELOW_EPHEMERAL_FROM = 10_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > BELOW_EPHEMERAL_FROM + 1_000) return low;
  } catch {
    // not Linux: IANA's dynamic range starts at 49152
  }
  return 49_152;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Resolves 'refused' or 'accepted' for one TCP connection attempt. */
export function tryConnect(port: number): Promise<'refused' | 'accepted'> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve('accepted')));
    s.once('error', () => resolve('refused'));
  });
}
