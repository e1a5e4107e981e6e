import { describeFieldNameFault, keyFault, PROTOTYPE_KEYS, type KeyRules } from './json';
import type { JsonBudget, JsonRules } from './json-validator';

const PROTOTYPE_KEY_RULES: KeyRules = { reserved: PROTOTYPE_KEYS, storable: false };

/**
 * The rules of the first look at a validated request body or query object, before
 * class-transformer walks it: prototype keys are refused at any depth (Nest would delete them
 * silently), nesting and size stay within the budget. The body's members are level 1 and are
 * named without a prefix. Module rules (data, profile) apply their stricter checks afterwards.
 */
export function requestJsonRules(budget: JsonBudget): JsonRules {
  return {
    key: (key) => {
      const fault = keyFault(key, PROTOTYPE_KEY_RULES);
      return fault && `field name ${describeFieldNameFault(fault, key, PROTOTYPE_KEY_RULES)}`;
    },
    value: () => null,
    budget,
    root: 'any',
    rootDepth: 0,
  };
}
