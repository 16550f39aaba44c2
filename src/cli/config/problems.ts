/** A configuration problem as `baton config check` and `serve` report it: where, what, and what to do. */
export interface Problem {
  severity: 'error' | 'warning';
  /** Dotted path into the configuration, e.g. `delegatees[1].id`. */
  path: string;
  message: string;
  hint?: string;
}

export const error = (path: string, message: string, hint?: string): Problem => ({ severity: 'error', path, message, ...(hint ? { hint } : {}) });
export const warning = (path: string, message: string, hint?: string): Problem => ({ severity: 'warning', path, message, ...(hint ? { hint } : {}) });

/** Human-readable report: one block per problem, then a count line. */
export function renderProblems(problems: readonly Problem[], source: string): string {
  const lines = problems.flatMap((p) => [`${p.severity === 'error' ? 'error  ' : 'warning'} ${p.path}: ${p.message}`, ...(p.hint ? [`        hint: ${p.hint}`] : [])]);
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  const summary = `${source}: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  return [...lines, problems.length === 0 ? `${source}: ok` : summary].join('\n');
}
