/**
 * Runs one CLI command as the gateway: the configured store, keys and
 * delegatees, composed exactly as `serve` does (without announcing Baton's
 * card, which would move its agent stream). Operator commands use this so
 * the CLI and the operator API share one implementation.
 */
import { resolvedPaths } from '../config.ts';
import type { composeGateway } from '../main.ts';
import type { Store } from '../store/port.ts';
import type { CliContext } from './context.ts';

export type GatewayCore = Awaited<ReturnType<typeof composeGateway>>;

export async function withGateway<T>(ctx: CliContext, fn: (core: GatewayCore, store: Store) => Promise<T>): Promise<T> {
  // The gateway's modules load when a command runs, not when the CLI starts (`baton --help`, `config check`).
  const [{ RemoteClient }, { Keyring }, { createLogger }, { composeGateway }, { openStore }] = await Promise.all([
    import('../gateway/remote.ts'),
    import('../keys/keyring.ts'),
    import('../log.ts'),
    import('../main.ts'),
    import('../store/open.ts'),
  ]);
  const config = ctx.config();
  const store = await openStore(config, { create: false });
  const remote = new RemoteClient({ limits: config.remote });
  try {
    const keyring = await Keyring.open(resolvedPaths(config).keys, { generate: false });
    const publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
    const core = await composeGateway(config, { store, keyring, publicUrl, logger: createLogger({ level: process.env.BATON_LOG_LEVEL ?? 'warn', destination: process.stderr }), remote, announce: false });
    try {
      return await fn(core, store);
    } finally {
      await core.push?.close();
    }
  } finally {
    await remote.close();
    await store.close();
  }
}
