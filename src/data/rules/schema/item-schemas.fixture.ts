import type { AppConfig } from '../../../config';
import { ItemSchemas } from './item-schemas';

/** The defaults of src/config/environment/limits.ts, for the specs of ItemSchemas. */
export const LIMITS = {
  schemaMaxBytes: 64 * 1024,
  schemaMaxDepth: 16,
  schemaMaxErrors: 20,
  schemaCacheSize: 500,
  schemaMaxExpandedNodes: 2000,
  schemaPatternMaxProgram: 4000,
  schemaCompileMaxMs: 1000,
  schemaCheckMaxMs: 50,
  dataMaxDepth: 20,
};
type Limits = typeof LIMITS;
export const schemasWith = (limits: Partial<Limits> = {}) =>
  new ItemSchemas({ limits: { ...LIMITS, ...limits } } as unknown as AppConfig);
/** Time budgets out of the way: what a static limit or the keyword itself bounds is measured. */
export const unhurried = () =>
  schemasWith({ schemaCompileMaxMs: 60_000, schemaCheckMaxMs: 60_000 });
