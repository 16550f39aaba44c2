/**
 * Reloading without a restart (issue #17): SIGHUP, `baton reload` and
 * `POST /admin/reload` re-read the configuration and swap the parts a running
 * gateway can change — pinned JWKS (trust), delegatees, callers (and the JWT
 * issuer's keys), presets — as one snapshot. Everything is built and checked
 * first; only then is it applied, in one synchronous step, so no request sees
 * half of an old and half of a new configuration. A configuration with any
 * error is refused whole and the running one stays. Changes that need a
 * restart (ports, store, keys…) are reported, never silently dropped.
 */
import { readFile } from 'node:fs/promises';
import type { TrustStore } from '../cards/trust-store.ts';
import { TrustStore as TrustStoreClass } from '../cards/trust-store.ts';
import { parseJwks } from '../cards/jwks.ts';
import type { JwksFetcher } from '../cards/trust-store.ts';
import type { Config } from '../config.ts';
import type { Preset } from '../contracts/presets.ts';
import { invalidRequest, isBatonError } from '../errors.ts';
import type { DelegationAuthority } from '../gateway/authority.ts';
import { createCallerAuthenticator, type CallerAuthenticator } from '../gateway/callers.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import type { GatewayPresetConfig } from '../contracts/machine-preset.ts';
import type { ProxyCards } from '../gateway/proxy-card.ts';
import type { Logger } from '../log.ts';
import { digestOf } from '../records/digest.ts';
import { callersOffGates, ungatedAliases } from './reload-gates.ts';

/** One problem with a configuration: where (a dotted path), what, and what to do (as `baton config check` prints it). */
export interface ConfigProblem {
  severity: 'error' | 'warning';
  path: string;
  message: string;
  hint?: string;
}

/** How the configuration is read again: the same file, environment and checks as at boot. */
export type Reread = () => { config?: Config; source: string; problems: ConfigProblem[] };

/** The top-level keys a running gateway applies live; every other change needs a restart. */
export const LIVE_KEYS = ['trust', 'delegatees', 'callers', 'jwt', 'presets'] as const;

export interface ReloadReport {
  applied: boolean;
  /** The file (or "defaults and environment") read. */
  source: string;
  /** Why it was refused (errors), or what to look at (warnings). */
  problems: ConfigProblem[];
  /** What changed and was applied, e.g. `delegatees: +billing -old ~search`, `trust`, `callers`. */
  changed: string[];
  /** Top-level keys that changed but take effect only after a restart (not applied). */
  restartRequired: string[];
}

export type CardRefresh = { delegatee: string; ok: true; payload_digest: string; signed: boolean } | { delegatee: string; ok: false; code: string; message: string };

/** Caller authentication that a reload can swap; requests in flight keep the one they started with. */
export class SwappableAuthenticator implements CallerAuthenticator {
  constructor(private current: CallerAuthenticator) {}
  authenticate(headers: Record<string, string | string[] | undefined>) {
    return this.current.authenticate(headers);
  }
  swap(next: CallerAuthenticator): void {
    this.current = next;
  }
}

/** The running parts a reload swaps, each shared by reference with the request path. */
export interface LiveParts {
  trust: TrustStore;
  delegatees: DelegateeRegistry;
  presets: Map<string, Readonly<Preset>>;
  auth: SwappableAuthenticator;
  cards: ProxyCards;
  authority: DelegationAuthority;
  buildPreset: (p: GatewayPresetConfig) => Readonly<Preset>;
  fetchJwks: JwksFetcher;
  /** Told the whole configuration after each applied reload (the metrics' label values). */
  applied?: (config: Config) => void;
}

/** The callers' authenticator for a configuration (reads the JWT issuer's pinned JWKS). */
export async function authenticatorFor(config: Pick<Config, 'callers' | 'jwt'>): Promise<CallerAuthenticator> {
  if (!config.jwt) return createCallerAuthenticator(config.callers);
  const jwks = JSON.parse(await readFile(config.jwt.jwksFile, 'utf8'));
  return createCallerAuthenticator(config.callers, { config: config.jwt, jwks });
}

/** The owner binding's config revision: which presets issued a root. */
export const configRevisionOf = (presets: Config['presets']): string => digestOf(presets).slice(7, 23);

interface Snapshot {
  trust: TrustStore;
  auth: CallerAuthenticator;
  presets: Map<string, Readonly<Preset>>;
}

export class LiveConfig {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private current: Config,
    private readonly deps: { parts: LiveParts; reread?: Reread; logger: Logger },
  ) {}

  /** Re-reads and applies the configuration; reloads run one at a time, in order. */
  reload(): Promise<ReloadReport> {
    const run = this.queue.then(() => this.reloadNow());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Re-fetches delegatees' cards now (all, or one), ignoring the cache's max-age. */
  async refreshCards(id?: string): Promise<CardRefresh[]> {
    const d = this.deps.parts.delegatees;
    if (id !== undefined && !d.has(id)) throw invalidRequest('no such delegatee', { delegatee: id });
    const ids = id === undefined ? d.ids() : [id];
    return Promise.all(
      ids.map(async (delegatee): Promise<CardRefresh> => {
        try {
          const r = await d.refresh(delegatee);
          return { delegatee, ok: true, payload_digest: r.verification.payload_digest, signed: r.observation.signed };
        } catch (err) {
          return { delegatee, ok: false, code: isBatonError(err) ? err.code : 'unavailable', message: err instanceof Error ? err.message : String(err) };
        } finally {
          this.deps.parts.cards.forget(delegatee); // Baton's proxy card for it is rebuilt from the new one
        }
      }),
    );
  }

  private async reloadNow(): Promise<ReloadReport> {
    const log = this.deps.logger;
    if (!this.deps.reread) {
      const report = refused('(none)', [{ severity: 'error', path: '(file)', message: 'this gateway was started without a configuration source to re-read', hint: 'start it with `baton serve`' }]);
      log.error({ problems: report.problems }, 'reload refused');
      return report;
    }
    const { config, source, problems } = this.deps.reread();
    if (!config || problems.some((p) => p.severity === 'error')) return this.refuse(source, problems);
    const built = await this.build(config);
    if ('problems' in built) return this.refuse(source, [...problems, ...built.problems]);
    const changed = this.changes(config);
    const restartRequired = restartKeys(this.current, config);
    this.apply(config, built);
    const report: ReloadReport = { applied: true, source, problems, changed, restartRequired };
    log.info({ source, changed }, changed.length > 0 ? 'configuration reloaded' : 'configuration reloaded (no live change)');
    if (restartRequired.length > 0) log.warn({ restartRequired }, 'configuration changes that need a restart were not applied');
    return report;
  }

  private refuse(source: string, problems: ConfigProblem[]): ReloadReport {
    // Path and hint of each problem, no stack traces: what `baton config check` would print.
    for (const p of problems.filter((q) => q.severity === 'error')) this.deps.logger.error({ path: p.path, hint: p.hint }, `reload refused: ${p.path}: ${p.message}`);
    this.deps.logger.error({ source, errors: problems.filter((p) => p.severity === 'error').length }, 'reload refused: the running configuration stays');
    return refused(source, problems);
  }

  /** Builds every swappable part from `config` without touching the running ones. */
  private async build(config: Config): Promise<Snapshot | { problems: ConfigProblem[] }> {
    const problems: ConfigProblem[] = [...unswappable(this.current, config)];
    const trust = new TrustStoreClass({ jkuAllowedOrigins: config.trust.jkuAllowedOrigins, fetchJwks: this.deps.parts.fetchJwks });
    for (const [origin, file] of Object.entries(config.trust.pinnedJwks)) {
      try {
        trust.pin(origin, await parseJwks(await readFile(file)));
      } catch (err) {
        problems.push({ severity: 'error', path: `trust.pinnedJwks["${origin}"]`, message: `${file}: ${messageOf(err)}`, hint: 'a JWKS file with the keys that sign the delegatee card at that origin' });
      }
    }
    for (const [i, c] of config.callers.entries()) {
      if (!c.upstream) continue;
      await readFile(c.upstream.contractJwksFile)
        .then(parseJwks)
        .catch((err: unknown) => problems.push({ severity: 'error', path: `callers[${i}].upstream.contractJwksFile`, message: messageOf(err), hint: "the upstream gateway's contract-signing JWKS" }));
    }
    let auth: CallerAuthenticator | undefined;
    try {
      auth = await authenticatorFor(config);
    } catch (err) {
      problems.push({ severity: 'error', path: 'jwt.jwksFile', message: messageOf(err), hint: "the JWT issuer's JWKS (JSON)" });
    }
    const presets = new Map<string, Readonly<Preset>>();
    for (const [i, p] of config.presets.entries()) {
      try {
        presets.set(p.id, this.deps.parts.buildPreset(p));
      } catch (err) {
        problems.push({ severity: 'error', path: `presets[${i}]`, message: messageOf(err) });
      }
    }
    return problems.length > 0 || !auth ? { problems } : { trust, auth, presets };
  }

  /** One synchronous step: every request after it sees the whole new snapshot. */
  private apply(config: Config, s: Snapshot): void {
    const p = this.deps.parts;
    p.trust.adopt(s.trust);
    p.delegatees.replace(config.delegatees);
    p.presets.clear();
    for (const [id, preset] of s.presets) p.presets.set(id, preset);
    p.auth.swap(s.auth);
    p.authority.reviseOwner(configRevisionOf(config.presets));
    p.authority.forgetUpstreamKeys();
    p.cards.forget();
    const live = Object.fromEntries(LIVE_KEYS.map((k) => [k, config[k]]));
    this.current = { ...{}, ...this.current, ...live } as Config;
    p.applied?.(this.current);
  }

  private changes(next: Config): string[] {
    const out: string[] = [];
    const before = new Map(this.current.delegatees.map((d) => [d.id, fingerprint(d)]));
    const after = new Map(next.delegatees.map((d) => [d.id, fingerprint(d)]));
    const added = [...after.keys()].filter((id) => !before.has(id)).map((id) => `+${id}`);
    const removed = [...before.keys()].filter((id) => !after.has(id)).map((id) => `-${id}`);
    const modified = [...after.keys()].filter((id) => before.has(id) && before.get(id) !== after.get(id)).map((id) => `~${id}`);
    if (added.length + removed.length + modified.length > 0) out.push(`delegatees: ${[...added, ...removed, ...modified].join(' ')}`);
    for (const k of ['trust', 'callers', 'jwt', 'presets'] as const) if (fingerprint(this.current[k]) !== fingerprint(next[k])) out.push(k);
    return out;
  }
}

/**
 * Parts of live keys that other components read once at boot: a human gate
 * (`requireApproval`, and the aliases and preset moves that would side-step
 * one: reload-gates.ts) and a caller's federation terms. Applying the rest while
 * these stayed old could fail open (an added gate not enforced), so a reload
 * that changes them is refused whole and says why.
 */
export function unswappable(a: Config, b: Config): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const gateOf = new Map(a.delegatees.map((d) => [d.id, fingerprint(d.requireApproval)]));
  for (const [i, d] of b.delegatees.entries()) {
    if (fingerprint(d.requireApproval) !== (gateOf.get(d.id) ?? fingerprint(undefined))) out.push({ severity: 'error', path: `delegatees[${i}].requireApproval`, message: 'a human gate cannot change on reload', hint: 'restart the gateway to add, change or remove a gate' });
  }
  const termsOf = new Map(a.callers.map((c) => [c.id, fingerprint({ up: c.upstream, down: c.downstream })]));
  for (const [i, c] of b.callers.entries()) {
    const before = termsOf.get(c.id);
    const now = fingerprint({ up: c.upstream, down: c.downstream });
    if ((before ?? fingerprint({})) !== now) out.push({ severity: 'error', path: `callers[${i}]`, message: 'a caller\'s upstream/downstream federation terms cannot change on reload', hint: 'restart the gateway to change gateway-to-gateway terms' });
  }
  return [...out, ...ungatedAliases(a, b), ...callersOffGates(a, b)];
}

/** Top-level keys outside LIVE_KEYS whose value differs. */
export function restartKeys(a: Config, b: Config): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !(LIVE_KEYS as readonly string[]).includes(k) && fingerprint(field(a, k)) !== fingerprint(field(b, k))).sort();
}

const field = (c: Config, k: string): unknown => (c as Record<string, unknown>)[k];
/** Canonical digest of a parsed config value (undefined members dropped, as JSON does). */
const fingerprint = (v: unknown): string => digestOf(JSON.parse(JSON.stringify(v ?? null)));
const refused = (source: string, problems: ConfigProblem[]): ReloadReport => ({ applied: false, source, problems, changed: [], restartRequired: [] });
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
