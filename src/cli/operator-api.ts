/**
 * Commands that act on the running gateway's memory (`baton reload`,
 * `baton cards refresh`) go through its operator API, not the store: only
 * the serving process holds the configuration and the card cache. The
 * operator key comes from the environment, never from an argument (which
 * `ps` would show).
 */
import { request } from 'undici';
import type { Config } from '../config.ts';

export interface OperatorApiOptions {
  /** Base URL of the operator API; default http://<admin.host>:<admin.port>. */
  admin?: string;
}

export class OperatorApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: { code?: string; message?: string; details?: Record<string, unknown> } },
  ) {
    super(body.error?.message ?? `operator API answered ${status}`);
  }
}

/** POSTs `body` to `path` on the operator API; resolves with the JSON answer, throws OperatorApiError on a refusal. */
export async function callOperatorApi(config: Config, path: string, body: unknown, opts: OperatorApiOptions = {}): Promise<unknown> {
  const key = process.env.BATON_OPERATOR_KEY;
  if (!key) throw new TypeError('set BATON_OPERATOR_KEY to an operator API key (see README "Operating Baton")');
  const host = config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host;
  const base = (opts.admin ?? `http://${host}:${config.admin.port}`).replace(/\/+$/, '');
  const res = await request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body), headersTimeout: 120_000, bodyTimeout: 120_000 });
  const answer = (await res.body.json()) as Record<string, unknown>;
  if (res.statusCode >= 400) throw new OperatorApiError(res.statusCode, answer);
  return answer;
}
