/** `baton serve`: run the gateway until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { startGateway } from '../../main.ts';
import { renderProblems } from '../config/problems.ts';
import { checkStatic } from '../config/static-checks.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the gateway (embedded SQLite, cards from cards/, dev keys generated on first start)')
    .option('-p, --port <port>', 'listen port (overrides config and BATON_PORT)')
    .addHelpText('after', '\nRefuses to start (exit 1) when `baton config check --offline` finds an error.')
    .action(async (opts: { port?: string }) => {
      // The same static checks as `baton config check` (not the network ones): a broken config never half-starts.
      const file = ctx.configFile();
      const { config, source, problems } = checkStatic(file ? { file } : {});
      if (problems.length > 0) console.error(renderProblems(problems, source));
      if (!config || problems.some((p) => p.severity === 'error')) {
        console.error('baton: not starting: the configuration has errors');
        process.exitCode = 1;
        return;
      }
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
      if (gw.adminUrl) console.log(`baton: operator API and console on ${gw.adminUrl} (console: ${gw.adminUrl}/console/)`);
      console.log(`baton: listening on ${gw.url}`);
    });
}
