import { useId, useState, type FormEvent } from 'react';
import { isOperator, OPERATORS, type Condition, type ItemQuery } from './query';

const OPERATOR_TEXT: Record<(typeof OPERATORS)[number], string> = {
  eq: 'equals',
  ne: 'does not equal',
  gt: 'greater than',
  gte: 'at least',
  lt: 'less than',
  lte: 'at most',
  in: 'one of (a,b,…)',
  nin: 'none of (a,b,…)',
  exists: 'exists (true/false)',
  prefix: 'starts with',
};

/**
 * The items query as a form: filter rows (field, operator, value), the sort field and order, the
 * projection and the page size. Applying it starts again at the first page.
 */
export function QueryForm(props: { query: ItemQuery; onApply: (query: ItemQuery) => void }) {
  const id = useId();
  const [draft, setDraft] = useState<ItemQuery>(props.query);
  const setCondition = (index: number, change: Partial<Condition>) =>
    setDraft({
      ...draft,
      conditions: draft.conditions.map((each, at) =>
        at === index ? { ...each, ...change } : each,
      ),
    });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply({ ...draft, conditions: draft.conditions.filter((each) => each.field.trim()) });
  };
  return (
    <form className="data-form query-form" onSubmit={submit} aria-label="Query">
      <fieldset>
        <legend>Filter</legend>
        {draft.conditions.length === 0 && <p className="hint">No conditions: every item.</p>}
        {draft.conditions.map((condition, index) => {
          const row = `${id}-c${index}`;
          const n = index + 1;
          return (
            <div className="condition" key={index}>
              <label htmlFor={`${row}-field`}>Field {n}</label>
              <input
                id={`${row}-field`}
                value={condition.field}
                onChange={(event) => setCondition(index, { field: event.target.value })}
              />
              <label htmlFor={`${row}-op`}>Operator {n}</label>
              <select
                id={`${row}-op`}
                value={condition.op}
                onChange={(event) => {
                  const op = event.target.value;
                  if (isOperator(op)) setCondition(index, { op });
                }}
              >
                {OPERATORS.map((op) => (
                  <option key={op} value={op}>
                    {OPERATOR_TEXT[op]}
                  </option>
                ))}
              </select>
              <label htmlFor={`${row}-value`}>Value {n}</label>
              <input
                id={`${row}-value`}
                value={condition.value}
                onChange={(event) => setCondition(index, { value: event.target.value })}
              />
              <button
                type="button"
                aria-label={`Remove condition ${n}`}
                onClick={() =>
                  setDraft({
                    ...draft,
                    conditions: draft.conditions.filter((_each, at) => at !== index),
                  })
                }
              >
                Remove
              </button>
            </div>
          );
        })}
        <button
          type="button"
          onClick={() =>
            setDraft({
              ...draft,
              conditions: [...draft.conditions, { field: '', op: 'eq', value: '' }],
            })
          }
        >
          Add condition
        </button>
      </fieldset>
      <div className="toolbar">
        <label htmlFor={`${id}-sort`}>Sort by</label>
        <input
          id={`${id}-sort`}
          value={draft.sortField}
          placeholder="_id"
          onChange={(event) => setDraft({ ...draft, sortField: event.target.value })}
        />
        <label htmlFor={`${id}-order`}>Order</label>
        <select
          id={`${id}-order`}
          value={draft.sortOrder}
          onChange={(event) =>
            setDraft({ ...draft, sortOrder: event.target.value === 'desc' ? 'desc' : 'asc' })
          }
        >
          <option value="asc">ascending</option>
          <option value="desc">descending</option>
        </select>
        <label htmlFor={`${id}-fields`}>Fields</label>
        <input
          id={`${id}-fields`}
          value={draft.fields}
          placeholder="a,b.c or -notes"
          onChange={(event) => setDraft({ ...draft, fields: event.target.value })}
        />
        <label htmlFor={`${id}-limit`}>Page size</label>
        <input
          id={`${id}-limit`}
          type="number"
          min={1}
          max={500}
          value={draft.limit}
          onChange={(event) =>
            setDraft({
              ...draft,
              limit: Math.min(500, Math.max(1, Number(event.target.value) || 1)),
            })
          }
        />
        <button type="submit" className="primary">
          Apply
        </button>
      </div>
    </form>
  );
}
