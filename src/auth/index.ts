export * from './auth.decorators';
export * from './principal';
export { isValidBranch, BRANCH_PATTERN } from './branch';
export { TEAM_ID_PATTERN } from './team-memberships.port';
export {
  PrincipalRights,
  rightsLossError,
  type RightsLoss,
  type RightsWatch,
} from './principal-rights';
export {
  checkCollectionAccess,
  collectionNameFilter,
  collectionPatternsOf,
  readableBy,
  readableCollections,
} from './collection-reach';
