/**
 * `baton reload`: asks the running gateway (through its operator API, like
 * SIGHUP does locally) to re-read its configuration. Prints what changed,
 * what needs a restart, or — when refused — every problem with its path and
 * hint; exit 1 when refused.
 */
import type { Command } from 'commander';
import type { ConfigProblem, ReloadReport } from '../../operator/reload.ts';
import { renderProblems } from '../config/problems.ts';
import type { CliContext } from '../context.ts';
import { callOperatorApi, OperatorApiError } from '../operator-api.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('reload')
    .description("re-read the running gateway's configuration (pinned JWKS, delegatees, callers, presets) without a restart")
    .option('--admin <url>', 'operator API base URL (default http://<admin.host>:<admin.port> from the config)')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', '\nNeeds BATON_OPERATOR_KEY. The same as `kill -HUP <pid>` on the gateway host. Exit 1 when the new configuration is refused (the old one stays).')
    .action(async (o: { admin?: string; json?: boolean }) => {
      try {
        const report = (await callOperatorApi(ctx.config(), '/admin/reload', {}, o.admin ? { admin: o.admin } : {})) as ReloadReport;
        if (o.json) return console.log(JSON.stringify(report, null, 2));
        console.log(`reloaded ${report.source}: ${report.changed.length > 0 ? report.changed.join('; ') : 'no live change'}`);
        if (report.restartRequired.length > 0) console.log(`needs a restart (not applied): ${report.restartRequired.join(', ')}`);
        if (report.problems.length > 0) console.log(renderProblems(report.problems, report.source));
      } catch (err) {
        if (!(err instanceof OperatorApiError)) throw err;
        const d = err.body.error?.details as { source?: string; problems?: ConfigProblem[] } | undefined;
        if (o.json) console.log(JSON.stringify(err.body, null, 2));
        else console.error(`baton: reload refused: ${err.message}${d?.problems ? `\n${renderProblems(d.problems, d.source ?? '(config)')}` : ''}`);
        process.exitCode = 1;
      }
    });
}
