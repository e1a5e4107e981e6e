import type { Document } from 'mongodb';
import { MAX_INDEX_FIELDS } from '../query/data.constants';
import type { ItemMatch } from '../query/data-query';
import type { ListPlan } from '../query/list-plan';

/**
 * What a list query does on the database (`GET /data/{c}/explain`), read from MongoDB's explain
 * output, and the index that would serve it. A database whose explain output is not MongoDB's
 * (FerretDB reports its SQL plan) is said to be unknown rather than guessed at.
 */

export interface IndexSuggestion {
  fields: Record<string, 1 | -1>;
}

export interface ExplainResult {
  /** The index the plan reads, null when it scans the collection, "unknown" when the database does not say. */
  indexUsed: string | null;
  /** The plan's first stage (IXSCAN, COLLSCAN, SORT, …), or "unknown". */
  stage: string;
  docsExamined?: number;
  /** The index definition, in the body format of POST /data/{c}/index, that would serve the query. */
  suggestion?: IndexSuggestion;
}

/** The plan's stages, depth first (a stage has an `inputStage` or `inputStages`). */
function stagesOf(stage: unknown): Document[] {
  if (typeof stage !== 'object' || stage === null) return [];
  const node = stage as Document;
  const input: unknown = node.inputStage;
  const inputs: unknown = node.inputStages;
  // Slot-based plans (MongoDB 7+) put the classic tree under queryPlan.
  const queryPlan: unknown = node.queryPlan;
  const children: unknown[] = [
    ...(input ? [input] : []),
    ...(Array.isArray(inputs) ? (inputs as unknown[]) : []),
    ...(queryPlan ? [queryPlan] : []),
  ];
  return [node, ...children.flatMap(stagesOf)];
}

/**
 * The index of an equality-sort-range (ESR) order: fields compared for equality first, then the
 * sort, then ranges; a sub key's owner field is an equality. Null when the query names nothing an
 * index could serve beyond `_id`.
 */
export function suggestIndex(match: ItemMatch, plan: ListPlan): IndexSuggestion | null {
  const fields: Record<string, 1 | -1> = {};
  const add = (path: string, direction: 1 | -1): void => {
    if (!(path in fields)) fields[path] = direction;
  };
  // The caller's scope: its equality fields (a sub key's owner field, a rule's equalities).
  for (const [path, value] of Object.entries(match.scope?.filter ?? {}))
    if (!path.startsWith('$') && (value === null || typeof value !== 'object')) add(path, 1);
  for (const c of match.conditions) if (c.kind === 'eq' && c.anyOf.length === 1) add(c.path, 1);
  for (const key of plan.sort) add(key.path, key.direction);
  for (const c of match.conditions)
    if (c.kind === 'range' || c.kind === 'prefix' || (c.kind === 'eq' && c.anyOf.length > 1))
      add(c.path, 1);
  const paths = Object.keys(fields);
  if (paths.length === 0 || (paths.length === 1 && paths[0] === '_id')) return null;
  return { fields: Object.fromEntries(Object.entries(fields).slice(0, MAX_INDEX_FIELDS)) };
}

/** Reads MongoDB's explain output; anything else is "unknown". */
export function readExplain(output: Document): Omit<ExplainResult, 'suggestion'> {
  const planner = output.queryPlanner as Document | undefined;
  const winning = planner?.winningPlan as Document | undefined;
  if (!winning) return { indexUsed: 'unknown', stage: 'unknown' };
  const stages = stagesOf(winning);
  const scan = stages.find((s) => s.stage === 'IXSCAN' || s.stage === 'COLLSCAN');
  const index = stages.find((s) => s.stage === 'IXSCAN')?.indexName as string | undefined;
  const stats = output.executionStats as Document | undefined;
  const examined: unknown = stats?.totalDocsExamined;
  return {
    indexUsed: scan?.stage === 'COLLSCAN' || index === undefined ? null : index,
    stage: String(winning.stage ?? (winning.queryPlan as Document | undefined)?.stage ?? 'unknown'),
    ...(typeof examined === 'number' ? { docsExamined: examined } : {}),
  };
}

export function toExplainResult(output: Document, match: ItemMatch, plan: ListPlan): ExplainResult {
  const read = readExplain(output);
  const suggestion =
    read.indexUsed === null || read.indexUsed === 'unknown' ? suggestIndex(match, plan) : null;
  return { ...read, ...(suggestion ? { suggestion } : {}) };
}
