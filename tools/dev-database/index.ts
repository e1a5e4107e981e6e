export {
  resolveDatabase,
  DatabaseUnavailableError,
  type DatabaseKind,
  type DatabaseSettings,
  type DatabaseResolutionOptions,
  type ResolvedDatabase,
} from './database-resolver';
export { loadDatabaseSettings } from './service';
export { removeThrowawayDataDir, throwawayDataDir } from './throwaway-data';
export {
  readDevDatabaseSettings,
  loadDotEnvFile,
  DevDatabaseSettingsError,
  type DevDatabaseSettings,
  type EmbeddedPreference,
} from './settings';
export { childPort, findFreePort, portForChild } from './ports';
