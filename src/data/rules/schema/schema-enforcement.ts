import { Injectable } from '@nestjs/common';
import type { RegisteredCollection } from '../../collections/collection-registry.repository';
import type { NativeCollection } from '../../storage/tenant-storage';
import { ItemSchemas, type SchemaError } from './item-schemas';
import { SchemaViolationError } from './schema.errors';

/** A collection as the write paths hold it: its registry entry carries its rules. */
type Target = NativeCollection & Partial<Pick<RegisteredCollection, 'rules'>>;

/**
 * The collection schema on the write paths: every write checks the item as it will be stored,
 * before anything is written. Under `error` a violation is a 422 and nothing is written; under
 * `warn` the write goes on and the violations are answered, for the write to return with what it
 * wrote (schema-warnings.ts).
 */
@Injectable()
export class SchemaEnforcement {
  constructor(private readonly schemas: ItemSchemas) {}

  /** Whether the collection has a schema (writes then read the item they change first). */
  applies(target: Target): boolean {
    return target.rules?.schema !== undefined;
  }

  /**
   * Checks one item as it will be stored (its own fields: see ItemSchemas.check), answering a
   * `warn` schema's violations (none: empty).
   */
  enforce(target: Target, item: Record<string, unknown>, ownerField: string): SchemaError[] {
    return this.enforceAll(target, [item], ownerField);
  }

  /**
   * Checks items a write will store together (a multi-item update): one that fails under
   * `error` refuses them all, naming it; under `warn` the violations of all are answered.
   */
  enforceAll(
    target: Target,
    items: readonly Record<string, unknown>[],
    ownerField: string,
  ): SchemaError[] {
    const rule = target.rules?.schema;
    if (!rule) return [];
    const warnings: SchemaError[] = [];
    // All within one SCHEMA_CHECK_MAX_MS: a multi-item update holds the event loop no longer.
    this.schemas.checkAll(rule.text, items, ownerField, (errors, item) => {
      if (errors.length === 0) return;
      if (rule.action === 'warn') warnings.push(...errors);
      else
        throw new SchemaViolationError(
          errors,
          items.length > 1 && typeof item._id === 'string' ? item._id : undefined,
        );
    });
    return warnings;
  }
}
