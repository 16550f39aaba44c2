/** Loopback socket helpers for lifecycle tests. */
import { connect, createServer, type AddressInfo } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Resolves 'refused' or 'accepted' for one TCP connection attempt. */
export function tryConnect(port: number): Promise<'refused' | 'accepted'> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve('accepted')));
    s.once('error', () => resolve('refused'));
  });
}
