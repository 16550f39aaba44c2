/**
 * Credentials Baton presents outbound (to a delegatee, an MCP server, an
 * upstream's head statements): a header filled from an environment variable
 * the operator names — never a literal secret in config (RW-003 §9).
 */
import { z } from 'zod';

export const EnvCredential = z.strictObject({ header: z.string().regex(/^[a-z0-9-]+$/), env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/), scheme: z.string().optional() });
export type EnvCredential = z.infer<typeof EnvCredential>;

/** The header the credential fills now, or undefined when its variable is unset (each caller refuses in its own terms). */
export function credentialHeader(auth: EnvCredential): Record<string, string> | undefined {
  const value = process.env[auth.env];
  if (!value) return undefined;
  return { [auth.header]: auth.scheme ? `${auth.scheme} ${value}` : value };
}
