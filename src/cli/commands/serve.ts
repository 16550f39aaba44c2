/** `baton serve`: run the gateway until SIGINT/SIGTERM. */
import type { Command } from 'commander';
import { renderProblems } from '../config/problems.ts';
import { checkStatic } from '../config/static-checks.ts';
import type { CliContext } from '../context.ts';
import { announceReady, isClusterWorker, MAX_WORKERS, parseWorkers, superviseWorkers } from '../workers.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the gateway (embedded SQLite, cards from cards/, dev keys generated on first start)')
    .option('-p, --port <port>', 'listen port (overrides config and BATON_PORT)')
    .option('-w, --workers <n>', `gateway processes sharing the port and the store, 1-${MAX_WORKERS} (node:cluster)`, '1')
    .addHelpText('after', '\nRefuses to start (exit 1) when `baton config check --offline` finds an error.')
    .action(async (opts: { port?: string; workers?: string }) => {
      // `kill -HUP $(pidof baton)` (README "Reloading without a restart") must find the gateway, not a process
      // named `node`; workers get their own name, so the signal reaches the primary, which passes it on.
      process.title = isClusterWorker() ? 'baton-worker' : 'baton';
      // The same static checks as `baton config check` (not the network ones): a broken config never half-starts.
      const file = ctx.configFile();
      const { config, source, problems } = checkStatic(file ? { file } : {});
      // Key files too, read as the gateway reads them: a bad one is named here, not a crash at start.
      if (config) problems.push(...(await (await import('../config/key-checks.ts')).checkKeys(config, problems)).problems);
      if (problems.length > 0) console.error(renderProblems(problems, source));
      if (!config || problems.some((p) => p.severity === 'error')) {
        console.error('baton: not starting: the configuration has errors');
        process.exitCode = 1;
        return;
      }
      if (opts.port !== undefined) config.port = Number(opts.port);
      const workers = parseWorkers(opts.workers);
      if (workers === undefined) {
        console.error(`baton: not starting: --workers takes an integer from 1 to ${MAX_WORKERS}`);
        process.exitCode = 1;
        return;
      }
      if (workers > 1 && !isClusterWorker()) return superviseWorkers(workers, { info: (m) => console.error(m), error: (m) => console.error(m) });
      // A reload reads the same file and environment through the same checks (and keeps --port).
      const reread = () => {
        const r = checkStatic(file ? { file } : {});
        if (r.config && opts.port !== undefined) r.config.port = Number(opts.port);
        return r;
      };
      // The gateway's modules load here, after the checks: a refused start, and every other command, never loads them.
      const [{ startGateway }, { routeConsole }] = await Promise.all([import('../../main.ts'), import('../../http/sdk-console.ts')]);
      const gw = await startGateway(config, { reread });
      // The SDK's console output becomes structured log lines (src/http/sdk-console.ts); the process is ours now.
      routeConsole(gw.logger);
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
      // SIGHUP: reload without a restart (src/operator/reload.ts logs what it applied or why it refused).
      process.on('SIGHUP', () => void gw.reload().catch((err: unknown) => gw.logger.error({ err }, 'reload failed')));
      // Announced only once the handlers are in place: a supervisor that signals the moment it reads this
      // line must reach the drain, not the default action (seen: npm start killed mid-announcement).
      if (gw.adminUrl) console.log(`baton: operator API and console on ${gw.adminUrl} (console: ${gw.adminUrl}/console/)`);
      if (isClusterWorker()) announceReady(gw.url);
      else console.log(`baton: listening on ${gw.url}`);
    });
}
