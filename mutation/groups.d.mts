/** Types of mutation/groups.mjs (a plain ES module, read by Stryker's config and the scripts too). */
export interface Group {
  mutate: string[];
  tests: string[];
  exclude?: string[];
  break: number;
  measured?: string;
  static: true | string;
  classified?: Record<string, string>;
}
export const GROUPS: Record<string, Group>;
export function groupDir(group: string): string;
