/** `baton init`: create the data directory, database and dev keys explicitly. */
import type { Command } from 'commander';
import { resolvedPaths } from '../../config.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('create the database and generate dev signing keys (serve does this on first start too)')
    .action(async () => {
      const config = ctx.config();
      const [{ Keyring }, { openStore }] = await Promise.all([import('../../keys/keyring.ts'), import('../../store/open.ts')]);
      const store = await openStore(config, { create: true });
      await store.close();
      const keys = await Keyring.open(resolvedPaths(config).keys);
      console.log(`store: ${config.store.kind === 'sqlite' ? resolvedPaths(config).sqlite : 'postgres'}`);
      for (const k of keys.all()) console.log(`key: ${k.kid} (${k.alg})`);
    });
}
