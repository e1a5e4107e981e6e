export {
  resolveDatabase,
  findFreePort,
  DatabaseUnavailableError,
  type DatabaseKind,
  type EmbeddedPreference,
  type DatabaseResolutionOptions,
  type ResolvedDatabase,
} from './database-resolver';
