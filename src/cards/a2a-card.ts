/**
 * The A2A v1.0 AgentCard (specification/a2a.proto, ProtoJSON camelCase form).
 * Two strictness levels from one definition: Baton's own card sources are
 * parsed strictly (an unknown key there is a typo), remote cards loosely (A2A
 * §5.7: "Implementations SHOULD ignore unrecognized fields"). Validation only:
 * signatures are always checked over the raw parsed JSON, never zod's output.
 */
import { z } from 'zod';
import { DetachedSignature } from '../records/signature.ts';

export type Strictness = 'strict' | 'loose';

const nonEmpty = z.string().min(1).max(2048);
const url = z.string().min(1).max(2048);

/** Builds the AgentCard schema for the given strictness. */
export function agentCardSchema(mode: Strictness) {
  const obj = <S extends z.core.$ZodLooseShape>(shape: S) => (mode === 'strict' ? z.strictObject(shape) : z.looseObject(shape));
  const stringList = obj({ list: z.array(z.string().max(256)).max(64).optional() });
  const securityRequirement = obj({ schemes: z.record(z.string().max(256), stringList).optional() });
  const scopes = z.record(z.string().max(256), z.string().max(1024));
  const flows = obj({
    authorizationCode: obj({
      authorizationUrl: url,
      tokenUrl: url,
      refreshUrl: url.optional(),
      scopes,
      pkceRequired: z.boolean().optional(),
    }).optional(),
    clientCredentials: obj({ tokenUrl: url, refreshUrl: url.optional(), scopes }).optional(),
    deviceCode: obj({ deviceAuthorizationUrl: url, tokenUrl: url, refreshUrl: url.optional(), scopes }).optional(),
    implicit: obj({ authorizationUrl: url.optional(), refreshUrl: url.optional(), scopes: scopes.optional() }).optional(),
    password: obj({ tokenUrl: url.optional(), refreshUrl: url.optional(), scopes: scopes.optional() }).optional(),
  });
  const description = z.string().max(4096).optional();
  // SecurityScheme is a proto oneof: exactly one member must be set.
  const securityScheme = obj({
    apiKeySecurityScheme: obj({ description, location: nonEmpty, name: nonEmpty }).optional(),
    httpAuthSecurityScheme: obj({ description, scheme: nonEmpty, bearerFormat: z.string().max(256).optional() }).optional(),
    oauth2SecurityScheme: obj({ description, flows, oauth2MetadataUrl: url.optional() }).optional(),
    openIdConnectSecurityScheme: obj({ description, openIdConnectUrl: url }).optional(),
    mtlsSecurityScheme: obj({ description }).optional(),
  }).refine((s) => ONEOF_SCHEMES.filter((k) => (s as Record<string, unknown>)[k] !== undefined).length === 1, {
    message: 'a security scheme sets exactly one of its oneof members',
  });
  const extension = obj({
    uri: z.string().max(2048).optional(),
    description: z.string().max(4096).optional(),
    required: z.boolean().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  });
  const skill = obj({
    id: nonEmpty,
    name: nonEmpty,
    description: z.string().max(8192),
    tags: z.array(z.string().max(256)).min(1).max(64),
    examples: z.array(z.string().max(4096)).max(64).optional(),
    inputModes: z.array(z.string().max(256)).max(64).optional(),
    outputModes: z.array(z.string().max(256)).max(64).optional(),
    securityRequirements: z.array(securityRequirement).max(32).optional(),
  });
  return obj({
    name: nonEmpty,
    description: z.string().max(8192),
    supportedInterfaces: z
      .array(obj({ url, protocolBinding: nonEmpty, tenant: z.string().max(256).optional(), protocolVersion: nonEmpty }))
      .min(1)
      .max(32),
    provider: obj({ url, organization: nonEmpty }).optional(),
    version: nonEmpty,
    documentationUrl: url.optional(),
    capabilities: obj({
      streaming: z.boolean().optional(),
      pushNotifications: z.boolean().optional(),
      extensions: z.array(extension).max(32).optional(),
      extendedAgentCard: z.boolean().optional(),
    }),
    securitySchemes: z.record(z.string().max(256), securityScheme).optional(),
    securityRequirements: z.array(securityRequirement).max(32).optional(),
    // A2A §5.7: "Arrays marked as required MUST contain at least one element."
    defaultInputModes: z.array(z.string().max(256)).min(1).max(64),
    defaultOutputModes: z.array(z.string().max(256)).min(1).max(64),
    skills: z.array(skill).min(1).max(256),
    signatures: z.array(DetachedSignature).max(8).optional(),
    iconUrl: url.optional(),
  });
}

const ONEOF_SCHEMES = [
  'apiKeySecurityScheme',
  'httpAuthSecurityScheme',
  'oauth2SecurityScheme',
  'openIdConnectSecurityScheme',
  'mtlsSecurityScheme',
] as const;

export const StrictAgentCard = agentCardSchema('strict');
export const LooseAgentCard = agentCardSchema('loose');
/** Typed view of a card; the bytes that are signed stay the raw JSON. */
export type AgentCardJson = z.infer<typeof LooseAgentCard>;
export type AgentExtensionJson = NonNullable<AgentCardJson['capabilities']['extensions']>[number];
