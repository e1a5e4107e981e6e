export * from './auth.decorators';
export * from './principal';
export { isValidBranch, BRANCH_PATTERN } from './branch';
