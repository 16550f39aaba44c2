/**
 * Step 1 of the request path: the A2A v1.0 SendMessageRequest, validated
 * completely before anything is admitted (A2A §6.1 Message, §6.5 Part).
 * A malformed request is `invalid_request` with nothing written and nothing
 * forwarded: an agent's refusal of it must never become an uncertain effect
 * that holds shared capacity. Unknown fields are kept (RW-003 §3: what Baton
 * does not understand it forwards unchanged); the known ones must be right.
 */
import { z } from 'zod';
import { invalidRequest } from '../../errors.ts';
import { RECORD_LIMITS } from '../../records/limits.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import { CONTRACT_EXTENSION } from '../present.ts';

/**
 * Nesting allowed in the params Baton forwards. The delegatee's reply carries
 * the same values a few levels deeper (params.message.metadata is
 * result.task.history[].metadata; a part's data sits three levels lower in a
 * task or a status event), and Baton reads that reply with the record bound
 * (RECORD_LIMITS.maxDepth): whatever passes here must still be readable when
 * echoed, or the effect runs and its answer cannot be read (issue #25 item 17).
 */
export const MAX_PARAMS_DEPTH = RECORD_LIMITS.maxDepth - 8;

const Id = z.string().min(1).max(2048);
/** Base64, standard or URL-safe alphabet (ProtoJSON accepts both for `bytes`). */
export const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const Metadata = z.record(z.string().max(2048), z.unknown());

/** Exactly one content member per part (A2A §6.5: `oneof content`). */
const Part = z
  .looseObject({
    text: z.string().max(1_000_000).optional(),
    raw: z.string().regex(BASE64, 'raw must be base64').max(4_000_000).optional(),
    url: z.string().min(1).max(8192).optional(),
    data: z.unknown().optional(),
    mediaType: z.string().max(256).optional(),
    filename: z.string().max(1024).optional(),
    metadata: Metadata.optional(),
  })
  .refine((p) => ['text', 'raw', 'url', 'data'].filter((k) => p[k] !== undefined).length === 1, 'a part carries exactly one of text, raw, url or data');

export const A2AMessage = z.looseObject({
  messageId: Id,
  role: z.enum(['ROLE_USER', 'ROLE_AGENT']),
  parts: z.array(Part).min(1).max(256),
  taskId: Id.optional(),
  contextId: Id.optional(),
  referenceTaskIds: z.array(Id).max(64).optional(),
  extensions: z.array(z.string().max(2048)).max(64).optional(),
  metadata: Metadata.optional(),
});

const Configuration = z.looseObject({
  acceptedOutputModes: z.array(z.string().max(256)).max(64).optional(),
  historyLength: z.number().int().min(0).max(10_000).optional(),
  returnImmediately: z.boolean().optional(),
  taskPushNotificationConfig: z.unknown().optional(),
});

export const SendMessageRequest = z.looseObject({
  tenant: z.string().max(2048).optional(),
  message: A2AMessage,
  configuration: Configuration.nullish(),
  metadata: Metadata.nullish(),
});

type Json = { [key: string]: JsonValue };

/** A validated request: the exact JSON received (to forward unchanged) and its typed reading. */
export interface ValidSend {
  params: Json;
  message: Json;
  taskId?: string;
  /** The caller asked not to wait (A2A `returnImmediately`). */
  returnImmediately: boolean;
  historyLength?: number;
}

/** Validates, then hands back the original values — never a re-serialised copy. */
export function validateSend(params: Json): ValidSend {
  if (depthOf(params) > MAX_PARAMS_DEPTH) throw invalidRequest(`SendMessage request nests deeper than ${MAX_PARAMS_DEPTH} levels`, { max_depth: MAX_PARAMS_DEPTH });
  // The SDK codec fills absent ids with "": an empty taskId/contextId means "none" (A2A §6.1 optional fields).
  const message = params.message as Json | undefined;
  const cleaned = message && typeof message === 'object' && !Array.isArray(message) ? dropEmpty(message, ['taskId', 'contextId']) : message;
  const parsed = SendMessageRequest.safeParse({ ...{}, ...params, message: cleaned });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidRequest(`SendMessage request is malformed: ${issue.path.join('.') || 'request'}: ${issue.message}`, { path: issue.path.join('.') });
  }
  const m = parsed.data.message;
  const presented = withPresentedChain(params, cleaned as Json);
  return {
    params: presented.params,
    message: presented.message,
    ...(m.taskId ? { taskId: m.taskId } : {}),
    returnImmediately: parsed.data.configuration?.returnImmediately === true,
    ...(parsed.data.configuration?.historyLength !== undefined ? { historyLength: parsed.data.configuration.historyLength } : {}),
  };
}

/**
 * A contract chain presented in the request's metadata (where a gateway sends
 * one, ../chain-placement.ts) is read from then on as the message's: one place
 * for bindAuthority, the human gate's recorded request and the task input to
 * look, whichever placement the sender used. Presented in both is refused,
 * never settled by a preference.
 */
function withPresentedChain(params: Json, message: Json): { params: Json; message: Json } {
  const requestMeta = params.metadata;
  if (!requestMeta || typeof requestMeta !== 'object' || Array.isArray(requestMeta) || !(CONTRACT_EXTENSION in requestMeta)) return { params: { ...{}, ...params, message }, message };
  const { [CONTRACT_EXTENSION]: chain, ...rest } = requestMeta;
  const messageMeta = (message.metadata as Json | undefined) ?? {};
  if (CONTRACT_EXTENSION in messageMeta) throw invalidRequest('the contract chain is presented twice, in the request metadata and in the message metadata', { extension: CONTRACT_EXTENSION });
  const moved: Json = { ...{}, ...message, metadata: { ...{}, ...messageMeta, [CONTRACT_EXTENSION]: chain! } };
  const { metadata: _request, ...others } = params;
  return { params: { ...{}, ...others, ...(Object.keys(rest).length > 0 ? { metadata: rest } : {}), message: moved }, message: moved };
}

function dropEmpty(message: Json, keys: readonly string[]): Json {
  const out = { ...message };
  for (const k of keys) if (out[k] === '' || out[k] === null) delete out[k];
  return out;
}

/** Nesting of arrays and objects (a scalar is 0); the edge parser already bounded it, so recursion is shallow. */
function depthOf(v: JsonValue | undefined): number {
  if (typeof v !== 'object' || v === null) return 0;
  let deepest = 0;
  for (const child of Array.isArray(v) ? v : Object.values(v)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}
