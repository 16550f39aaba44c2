/** `baton serve`: run the gateway until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { startGateway } from '../../main.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the gateway (embedded SQLite, cards from cards/, dev keys generated on first start)')
    .option('-p, --port <port>', 'listen port (overrides config and BATON_PORT)')
    .action(async (opts: { port?: string }) => {
      const config = ctx.config();
      if (opts.port !== undefined) config.port = Number(opts.port);
      const gw = await startGateway(config);
      // SIGTERM/SIGINT drain (see Gateway.close): bounded by shutdown.drainMs, plus a hard stop in case closing itself hangs.
      const stop = async (signal: string) => {
        gw.logger.info({ signal, drainMs: config.shutdown.drainMs }, 'shutting down: draining');
        setTimeout(() => process.exit(1), config.shutdown.drainMs + 10_000).unref();
        await gw.close();
        process.exit(0);
      };
      // A repeated signal during the drain (a supervisor or npm passing it on twice) must not cut the
      // drain short by the default action: the first one drains, later ones are noted; the hard stop bounds it.
      let draining = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (draining) return void gw.logger.info({ signal }, 'already draining');
        draining = true;
        void stop(signal);
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // Announced only once the handlers are in place: a supervisor that signals the moment it reads this
      // line must reach the drain, not the default action (seen: npm start killed mid-announcement).
      console.log(`baton: listening on ${gw.url}`);
    });
}
