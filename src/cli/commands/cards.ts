/**
 * `baton cards sign` writes the signed public cards and the JWKS into
 * well-known/ (servable by any static host); `baton cards verify <url|file>`
 * checks a remote card with the same verifier the gateway uses and prints the
 * verification record.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import type { CardRefresh } from '../../operator/reload.ts';
import { callOperatorApi, OperatorApiError } from '../operator-api.ts';
import type { VerifyOptions } from './cards-run.ts';

export function register(program: Command, ctx: CliContext): void {
  const cards = program.command('cards').description("Baton's own Agent Cards and verification of remote ones");

  cards
    .command('sign')
    .description('validate and sign every card source; write public cards and JWKS into the well-known directory')
    .option('--out <dir>', 'output directory (default: config wellKnownDir)')
    .action(async (o: { out?: string }) => (await import('./cards-run.ts')).signCards(ctx, o));

  cards
    .command('verify <target>')
    .description('verify a card at an https URL or in a file; prints the verification record')
    .option('--jwks <file>', "pin this JWKS for the card's origin")
    .option('--allow-jku <origin>', 'allow jku key sets from this origin (repeatable)', (v: string, acc: string[]) => [...acc, v], [])
    .option('--origin <origin>', 'origin whose trust applies to a card file (default: its first interface URL)')
    .option('--json', 'print the whole record including the card')
    .action(async (target: string, o: VerifyOptions) => {
      const record = await (await import('./cards-run.ts')).verifyTarget(target, o, ctx);
      const { card: _card, rw003: _rw003, ...summary } = record;
      console.log(JSON.stringify(o.json ? record : summary, null, 2));
    });

  cards
    .command('refresh [delegatee]')
    .description("re-fetch a delegatee's card now (every delegatee without an argument) in the running gateway, instead of after the cache's max-age")
    .option('--admin <url>', 'operator API base URL (default http://<admin.host>:<admin.port> from the config)')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nNeeds BATON_OPERATOR_KEY. Exit 1 when a card does not verify or cannot be fetched.')
    .action(async (delegatee: string | undefined, o: { admin?: string; json?: boolean }) => {
      const body = delegatee === undefined ? {} : { delegatee };
      try {
        const { cards: results } = (await callOperatorApi(ctx.config(), '/admin/cards/refresh', body, o.admin ? { admin: o.admin } : {})) as { cards: CardRefresh[] };
        if (o.json) console.log(JSON.stringify(results, null, 2));
        else for (const r of results) console.log(r.ok ? `${r.delegatee}: verified ${r.payload_digest}${r.signed ? '' : ' (unsigned, operator-attested)'}` : `${r.delegatee}: ${r.code}: ${r.message}`);
        if (results.some((r) => !r.ok)) process.exitCode = 1;
      } catch (err) {
        if (!(err instanceof OperatorApiError)) throw err;
        console.error(`baton: ${err.body.error?.code ?? err.status}: ${err.message}`);
        process.exitCode = 1;
      }
    });
}
