export { IdentityModule } from './identity.module';
export { TokenIdentities } from './token-identities';
