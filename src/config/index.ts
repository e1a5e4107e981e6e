export { loadConfig, ConfigValidationError, type AppConfig } from './app-config';
export { loadDotEnvFile } from './dotenv-file';
export { ConfigModule, APP_CONFIG } from './config.module';
export { CLUSTER_NAME, DEFAULT_CLUSTER, type DataClusterConfig } from './data-clusters';
export {
  isTrustedUrl,
  parseOidcIssuers,
  unknownDefaultScopes,
  type OidcIssuerConfig,
} from './oidc-issuers';
