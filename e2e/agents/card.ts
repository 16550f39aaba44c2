import { AgentCard, type Part } from '@a2a-js/sdk';

/** Options that shape the Agent Card a test delegatee advertises. */
export interface CardOptions {
  /** Human-readable agent name; also echoed in the ready line. */
  name: string;
  /** Base URL with the real bound port, e.g. `http://127.0.0.1:43121`. */
  baseUrl: string;
  /** Extension URI the agent requires; advertised as `required: true`. */
  requireExtension?: string | undefined;
}

/**
 * Builds the internal (proto-TS) Agent Card. Built after `listen()` because the
 * SDK client dials `supportedInterfaces[].url`, so the card must carry the real port.
 */
export function buildCard(opts: CardOptions): AgentCard {
  const { name, baseUrl, requireExtension } = opts;
  return {
    name,
    description: `Baton e2e delegatee (${name})`,
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${baseUrl}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: `${baseUrl}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
    ],
    provider: undefined,
    capabilities: {
      streaming: true,
      // The SDK handler only stores push configs and calls the sender when this is true.
      pushNotifications: true,
      extensions: requireExtension
        ? [{ uri: requireExtension, description: 'required by this test agent', required: true, params: undefined }]
        : [],
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
