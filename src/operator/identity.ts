/** Who may act as an operator, and the actor their actions are recorded under. */
import { z } from 'zod';
import { Identifier } from '../records/ids.ts';

export const OperatorConfig = z.strictObject({
  id: Identifier,
  /** Lowercase hex sha256 of the operator's API key; the key itself is never configured. */
  apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type OperatorConfig = z.infer<typeof OperatorConfig>;

export const AdminConfig = z.strictObject({
  /** The operator API listens apart from the A2A front door; loopback unless decided otherwise. */
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8081),
  /** Escalations are also delivered here (signed, through the push outbox). */
  webhookUrl: z.url().optional(),
  /**
   * Host names (without port) the operator listener answers besides loopback
   * names and `host` itself: a DNS-rebinding page names its own host (issue #25 item 19).
   */
  allowedHosts: z.array(z.string().min(1).max(253)).max(64).default([]),
});

