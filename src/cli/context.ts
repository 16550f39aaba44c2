/** What every CLI command receives: the parsed config, loaded lazily once. */
import { loadConfig, type Config } from '../config.ts';

export interface CliContext {
  config(): Config;
  /** The file named by --config, if any (BATON_CONFIG and the default apply when undefined). */
  configFile(): string | undefined;
}

export function cliContext(file: () => string | undefined): CliContext {
  let cached: Config | undefined;
  return { config: () => (cached ??= loadConfig({ file: file() })), configFile: file };
}
