/**
 * The composition root: the only place that wires adapters (store, keys,
 * HTTP) to the core. Everything else receives its dependencies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { resolvedPaths } from './config.ts';
import { createApp } from './http/app.ts';
import { Keyring } from './keys/keyring.ts';
import { createLogger, type Logger } from './log.ts';
import { openStore } from './store/open.ts';
import type { Store } from './store/port.ts';

export interface Gateway {
  url: string;
  server: Server;
  store: Store;
  keyring: Keyring;
  logger: Logger;
  close(): Promise<void>;
}

/** Opens the store and keys, builds the app and listens. */
export async function startGateway(config: Config, opts: { logger?: Logger } = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const store = await openStore(config, { create: true });
  const keyring = await Keyring.open(resolvedPaths(config).keys);
  const app = createApp({ store, logger, routers: [] });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, store: config.store.kind, keys: keyring.all().map((k) => k.kid) }, 'baton gateway listening');
  return {
    url,
    server,
    store,
    keyring,
    logger,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await store.close();
    },
  };
}
