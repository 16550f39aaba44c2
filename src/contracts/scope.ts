/**
 * Contract scope (RW-003 §5.1 scope, ADR-0014 "scope"): finite registered
 * operations and tools, hierarchical resource selectors, data classes and
 * effect classes. There are no wildcards: a selector names a project, one
 * object in it, or one exact revision of that object, and containment
 * (revision ⊂ object ⊂ project) is decidable without I/O.
 */
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { Identifier } from '../records/ids.ts';

// Glob/regex metacharacters and "match everything" words would let a selector
// denote an open set; ADR-0014 rejects "omitted wildcard selectors".
const WILDCARD = /[*?+()[\]{}|^$\\]/;
const OPEN_WORDS = new Set(['all', 'any', 'every', '%']);

/** An identifier that cannot denote a set (no wildcard syntax). */
export const ScopeId = Identifier.refine((s) => !WILDCARD.test(s) && !OPEN_WORDS.has(s.toLowerCase()), {
  message: 'wildcards are not allowed in scope',
});

export const DATA_CLASSES = ['public', 'internal', 'confidential', 'restricted'] as const;
/** RW-003 §2 DataClass: a base class or a versioned project extension `ext:<name>@v<n>`. */
export const DataClass = z.union([z.enum(DATA_CLASSES), z.string().regex(/^ext:[a-z][a-z0-9_.-]{0,63}@v[0-9]{1,6}$/)]);
export type DataClass = z.infer<typeof DataClass>;

/** Effect categories an operation registration can declare (ADR-0014 "effect restrictions"). */
export const EFFECT_CLASSES = [
  'read',
  'proposal',
  'reversible_mutation',
  'canonical_mutation',
  'delete',
  'external_publication',
  'external_commitment',
  'spend',
] as const;
export const EffectClass = z.enum(EFFECT_CLASSES);
export type EffectClass = z.infer<typeof EffectClass>;

export const ResourceSelector = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('project'), project_id: ScopeId }),
  z.strictObject({ kind: z.literal('object'), project_id: ScopeId, object_id: ScopeId }),
  z.strictObject({ kind: z.literal('revision'), project_id: ScopeId, object_id: ScopeId, revision_id: ScopeId }),
]);
export type ResourceSelector = z.infer<typeof ResourceSelector>;

export const Scope = z.strictObject({
  operations: z.array(ScopeId).min(1).max(4096),
  tools: z.array(ScopeId).max(4096),
  resources: z.array(ResourceSelector).min(1).max(4096),
  data_classes: z.array(DataClass).min(1).max(64),
  effect_classes: z.array(EffectClass).min(1),
});
export type Scope = z.infer<typeof Scope>;

/** True when `outer` contains every resource `inner` denotes. */
export function selectorCovers(outer: ResourceSelector, inner: ResourceSelector): boolean {
  if (outer.project_id !== inner.project_id) return false;
  if (outer.kind === 'project') return true;
  if (inner.kind === 'project' || outer.object_id !== inner.object_id) return false;
  if (outer.kind === 'object') return true;
  return inner.kind === 'revision' && outer.revision_id === inner.revision_id;
}

/** True when some selector in `set` covers `inner`. */
export function anyCovers(set: readonly ResourceSelector[], inner: ResourceSelector): boolean {
  return set.some((outer) => selectorCovers(outer, inner));
}

/** Number of scope entries, for the ADR-0014 256-entry bound. */
export function scopeEntryCount(scope: Scope): number {
  return scope.operations.length + scope.tools.length + scope.resources.length;
}

/** One trusted operation registration (ADR-0014 "Trusted operation registrations"). */
export interface OperationRegistration {
  effect_class: EffectClass;
}

/**
 * The owner's registry of operations and tools. Only registered identities can
 * appear in a scope; the registry also says which effect class each operation
 * has so a scope cannot name an operation whose effect it does not allow.
 */
export interface ScopeRegistry {
  operations: ReadonlyMap<string, OperationRegistration>;
  tools: ReadonlySet<string>;
}

/** A2A operations Baton forwards (DESIGN §5), registered by default. */
export const A2A_OPERATIONS: ReadonlyMap<string, OperationRegistration> = new Map([
  ['a2a.SendMessage', { effect_class: 'proposal' }],
  ['a2a.SendStreamingMessage', { effect_class: 'proposal' }],
  ['a2a.GetTask', { effect_class: 'read' }],
  ['a2a.ListTasks', { effect_class: 'read' }],
  ['a2a.CancelTask', { effect_class: 'reversible_mutation' }],
  ['a2a.SubscribeToTask', { effect_class: 'read' }],
  ['a2a.SetTaskPushNotificationConfig', { effect_class: 'reversible_mutation' }],
  ['a2a.GetTaskPushNotificationConfig', { effect_class: 'read' }],
  ['a2a.ListTaskPushNotificationConfig', { effect_class: 'read' }],
  ['a2a.DeleteTaskPushNotificationConfig', { effect_class: 'reversible_mutation' }],
]);

export const defaultScopeRegistry: ScopeRegistry = { operations: A2A_OPERATIONS, tools: new Set() };

/**
 * The registry of a gateway that also fronts MCP servers (issue #26): A2A's
 * operations, `mcp.tools/call`, and exactly the tools the operator configured.
 * A tool call changes something outside Baton, so it is registered as a
 * reversible mutation; a tool the owner's scope does not name is never callable.
 */
export function registryWithTools(tools: readonly string[]): ScopeRegistry {
  if (tools.length === 0) return defaultScopeRegistry;
  return { operations: new Map([...A2A_OPERATIONS, ['mcp.tools/call', { effect_class: 'reversible_mutation' }]]), tools: new Set(tools) };
}

/**
 * Rejects operations/tools the registry does not know and operations whose
 * registered effect class the scope does not allow (malformed scope ⇒
 * invalid_request, ADR-0014 "Lifetime, limits and errors").
 */
export function checkRegistered(scope: Scope, registry: ScopeRegistry): void {
  const unknownOps = scope.operations.filter((op) => !registry.operations.has(op));
  const unknownTools = scope.tools.filter((t) => !registry.tools.has(t));
  if (unknownOps.length > 0 || unknownTools.length > 0) {
    throw invalidRequest('scope names unregistered operations or tools', {
      operations: unknownOps.slice(0, 16),
      tools: unknownTools.slice(0, 16),
    });
  }
  const effects = new Set(scope.effect_classes);
  const mismatched = scope.operations.filter((op) => !effects.has(registry.operations.get(op)!.effect_class));
  if (mismatched.length > 0) {
    throw invalidRequest('scope names operations whose effect class it does not allow', { operations: mismatched.slice(0, 16) });
  }
}
