export { IdentityModule } from './identity.module';
export { TokenIdentities } from './token-identities';
export { IdentityLinks, type LinkedIdentity } from './identity-links';
export { LinkedIdentityDto } from './dto/linked-identity.dto';
