/** Baton's version, read from package.json from the directory above src/ (or dist/, once compiled). */
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
