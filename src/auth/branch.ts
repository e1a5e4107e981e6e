/** Branch names: '' (the standard branch) or a lowercase slug; see SPEC section 1. */
export const BRANCH_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export function isValidBranch(value: string): boolean {
  return value === '' || BRANCH_PATTERN.test(value);
}
