/** `baton config check`: validate a configuration without starting anything. */
import type { Command } from 'commander';
import { renderProblems } from '../config/problems.ts';
import { checkStatic } from '../config/static-checks.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the configuration: schema, ids, key files, live cards under the gateway\'s rules, free ports')
    .option('--offline', 'skip the checks that fetch cards and bind ports (key files are still read)')
    .option('--json', 'print the problems as JSON')
    .addHelpText('after', '\nExit code 1 when any problem is an error; warnings alone exit 0.')
    .action(async (opts: { offline?: boolean; json?: boolean }) => {
      const file = ctx.configFile();
      const { config: parsed, source, problems } = checkStatic(file ? { file } : {});
      if (parsed) {
        const { checkKeys } = await import('../config/key-checks.ts');
        const keys = await checkKeys(parsed, problems);
        problems.push(...keys.problems);
        if (!opts.offline) problems.push(...(await (await import('../config/network-checks.ts')).checkNetwork(parsed, keys.trust, problems)));
      }
      console.log(opts.json ? JSON.stringify({ source, problems }, null, 2) : renderProblems(problems, source));
      process.exitCode = problems.some((p) => p.severity === 'error') ? 1 : 0;
    });
}
