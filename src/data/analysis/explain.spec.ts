import type { ItemMatch } from '../query/data-query';
import { readExplain, suggestIndex } from './explain';
import type { ListPlan } from '../query/list-plan';

const plan = (sort: ListPlan['sort']): ListPlan => ({ sort, limit: 10, reversed: false });

describe('explain output', () => {
  it('names the index of a classic plan and counts the documents examined', () => {
    const output = {
      queryPlanner: {
        winningPlan: {
          stage: 'LIMIT',
          inputStage: { stage: 'FETCH', inputStage: { stage: 'IXSCAN', indexName: 'total_1' } },
        },
      },
      executionStats: { totalDocsExamined: 7 },
    };
    expect(readExplain(output)).toEqual({ indexUsed: 'total_1', stage: 'LIMIT', docsExamined: 7 });
  });

  it('reads slot-based plans and $or branches, and a collection scan as null', () => {
    const sbe = {
      queryPlanner: {
        winningPlan: {
          queryPlan: {
            stage: 'SORT',
            inputStage: { stage: 'OR', inputStages: [{ stage: 'COLLSCAN' }] },
          },
        },
      },
    };
    expect(readExplain(sbe)).toEqual({ indexUsed: null, stage: 'SORT' });
  });

  it('says unknown for an output that is not MongoDB’s instead of guessing', () => {
    expect(readExplain({ queryPlanner: { Plan: ['SCAN d_1'] } })).toEqual({
      indexUsed: 'unknown',
      stage: 'unknown',
    });
  });

  it('suggests equality, then sort, then range fields, owner scope first, at most 5', () => {
    const match: ItemMatch = {
      scope: { filter: { ownerId: 'a' } },
      conditions: [
        { kind: 'range', path: 'total', op: 'gte', value: 10 },
        { kind: 'eq', path: 'status', anyOf: ['open'] },
        { kind: 'eq', path: 'tag', anyOf: ['a', 'b'] },
        { kind: 'prefix', path: 'sku', prefix: 'A' },
        { kind: 'ne', path: 'void', noneOf: [true] },
      ],
    };
    expect(suggestIndex(match, plan([{ path: '_createdAt', direction: -1 }]))).toEqual({
      fields: { ownerId: 1, status: 1, _createdAt: -1, total: 1, tag: 1 },
    });
    expect(
      suggestIndex({ scope: null, conditions: [] }, plan([{ path: '_id', direction: -1 }])),
    ).toBeNull();
  });
});
