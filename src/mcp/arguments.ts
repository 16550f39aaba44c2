/**
 * Tool arguments checked against the tool's input schema before admission
 * (issue #26: "invalid arguments refused with nothing written"). Schemas are
 * JSON Schema (MCP: 2020-12 by default); each is compiled once per content.
 * A schema Baton cannot compile refuses the call: fail closed.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { invalidRequest, unsupported } from '../errors.ts';
import { digestOf } from '../records/digest.ts';
import type { JsonValue } from '../records/strict-json.ts';

export class ArgumentCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  check(server: string, tool: Pick<Tool, 'name' | 'inputSchema'>, args: { [k: string]: JsonValue }): void {
    const validate = this.validator(server, tool);
    if (validate(args)) return;
    const first = validate.errors?.[0];
    throw invalidRequest('tool arguments do not match its input schema', {
      tool: tool.name,
      ...(first ? { at: first.instancePath.slice(0, 256) || '/', problem: (first.message ?? 'invalid').slice(0, 256) } : {}),
    });
  }

  private validator(server: string, tool: Pick<Tool, 'name' | 'inputSchema'>): ValidateFunction {
    const { $schema: _dialect, ...schema } = tool.inputSchema as Record<string, unknown>;
    const key = `${server}/${tool.name}/${digestOf(schema as JsonValue)}`;
    let v = this.compiled.get(key);
    if (v) return v;
    try {
      v = this.ajv.compile(schema);
    } catch (err) {
      throw unsupported('the tool input schema cannot be checked', { tool: tool.name, problem: err instanceof Error ? err.message.slice(0, 256) : 'invalid schema' });
    }
    // Bounded: a server that changes schemas forever does not grow this map forever.
    if (this.compiled.size >= 1024) this.compiled.clear();
    this.compiled.set(key, v);
    return v;
  }
}
