import { AgentCard, type Part } from '@a2a-js/sdk';

/** Options that shape the Agent Card a test delegatee advertises. */
export interface CardOptions {
  /** Human-readable agent name; also echoed in the ready line. */
  name: string;
  /** Base URL with the real bound port, e.g. `http://127.0.0.1:43121`. */
  baseUrl: string;
  /** Extension URI the agent requires; advertised as `required: true`. */
  requireExtension?: string | undefined;
  /** Extension URI the agent declares without requiring it (`required: false`, no params). */
  declareExtension?: string | undefined;
  /** A2A version the agent speaks (default 1.0); a 0.3 agent serves a v0.3-shaped card. */
  protocol?: '1.0' | '0.3' | undefined;
}

/**
 * Builds the internal (proto-TS) Agent Card. Built after `listen()` because the
 * SDK client dials `supportedInterfaces[].url`, so the card must carry the real port.
 */
export function buildCard(opts: CardOptions): AgentCard {
  const { name, baseUrl, requireExtension, declareExtension } = opts;
  const version = opts.protocol ?? '1.0';
  return {
    name,
    description: `Baton e2e delegatee (${name})`,
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${baseUrl}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: version, tenant: '' },
      { url: `${baseUrl}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: version, tenant: '' },
    ],
    provider: undefined,
    capabilities: {
      streaming: true,
      // The SDK handler only stores push configs and calls the sender when this is true.
      pushNotifications: true,
      extensions: [
        ...(requireExtension ? [{ uri: requireExtension, description: 'required by this test agent', required: true, params: undefined }] : []),
        ...(declareExtension ? [{ uri: declareExtension, description: 'declared by this test agent', required: false, params: undefined }] : []),
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'reverse',
        name: 'Reverse',
        description: 'Echoes the input text reversed',
        tags: ['test'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Serialises a card to spec ProtoJSON (agentCardHandler would leak `$case` oneofs; brief gotcha 5). */
export function cardJson(card: AgentCard): unknown {
  return AgentCard.toJSON(card);
}

/**
 * The same card in A2A v0.3's shape, as a v0.3 agent publishes it: `url` +
 * `preferredTransport`, card-level `protocolVersion`, `kind`-free skills. No
 * empty values, so every canonicaliser agrees on what its signature covers.
 */
export function legacyCardJson(opts: CardOptions): { [key: string]: unknown } {
  return {
    protocolVersion: '0.3.0',
    name: opts.name,
    description: `Baton e2e delegatee (${opts.name}), A2A v0.3`,
    url: `${opts.baseUrl}/a2a/jsonrpc`,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: `${opts.baseUrl}/a2a/rest`, transport: 'HTTP+JSON' }],
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'reverse', name: 'Reverse', description: 'Echoes the input text reversed', tags: ['test'] }],
  };
}

/** A text Part in the SDK's internal shape (all non-optional fields present). */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** Concatenates the text parts of a message/artifact; non-text parts are ignored. */
export function partsText(parts: readonly Part[]): string {
  return parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** The deterministic "work" every honest agent does: reverse by code point. */
export function reverseText(text: string): string {
  return Array.from(text).reverse().join('');
}
