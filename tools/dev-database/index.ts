export {
  resolveDatabase,
  findFreePort,
  DatabaseUnavailableError,
  type DatabaseKind,
  type DatabaseSettings,
  type EmbeddedPreference,
  type DatabaseResolutionOptions,
  type ResolvedDatabase,
} from './database-resolver';
export { loadDatabaseSettings } from './service';
