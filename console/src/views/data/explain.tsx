import { unwrap, useApi } from '../../api';
import type { Schemas } from '@profile-data/client';
import { ActionError, useAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { listParams, type ItemQuery } from './query';

type Index = Schemas['DataIndexDto'];
type Fields = Index['fields'];

function fieldsText(fields: Fields): string {
  return Object.entries(fields)
    .map(([field, order]) => `${field} ${order === 1 ? 'ascending' : 'descending'}`)
    .join(', ');
}

/** An index whose leading fields are `fields`, in order and direction: it serves such a query. */
function servingIndex(indexes: readonly Index[], fields: Fields): Index | undefined {
  const want = Object.entries(fields);
  return indexes.find((index) => {
    const have = Object.entries(index.fields);
    return want.every(([field, order], at) => have[at]?.[0] === field && have[at]?.[1] === order);
  });
}

/**
 * What the database does for the items query (GET /data/{c}/explain with the same parameters):
 * whether an index serves it, and the index that would, created with one click.
 */
export function ExplainPanel(props: {
  collection: string;
  query: ItemQuery;
  onIndexCreated: () => void;
}) {
  const { client } = useApi();
  const { collection, query } = props;
  const path = { collection };
  const explained = useLoad(async () => {
    const [plan, indexes] = await Promise.all([
      unwrap(
        client.GET('/data/{collection}/explain', { params: { path, query: listParams(query) } }),
      ),
      unwrap(client.GET('/data/{collection}/index', { params: { path } })),
    ]);
    return { plan, indexes };
  }, [client, collection, query]);
  const create = useAction(async (fields: Fields) => {
    await unwrap(client.POST('/data/{collection}/index', { params: { path }, body: { fields } }));
    props.onIndexCreated();
    explained.reload();
  });
  return (
    <section className="explain" aria-labelledby="explain-title">
      <h2 id="explain-title">Explain the items query</h2>
      <p className="hint">
        The query of the Items tab: {query.conditions.length} conditions, sorted by{' '}
        {query.sortField || '_id'} {query.sortOrder}.
      </p>
      <Async loaded={explained}>
        {({ plan, indexes }) => {
          const suggestion = plan.suggestion?.fields;
          const serving = suggestion ? servingIndex(indexes, suggestion) : undefined;
          let verdict: string;
          if (plan.indexUsed === null)
            verdict = 'No index serves this query: it scans the collection.';
          else if (plan.indexUsed !== 'unknown') verdict = `Uses the index ${plan.indexUsed}.`;
          else if (serving) verdict = `The index ${serving.name} serves this query.`;
          else verdict = 'No index serves this query.';
          return (
            <>
              <p className="verdict" role="status">
                {verdict}
              </p>
              <dl className="facts">
                <div>
                  <dt>Index used</dt>
                  <dd>{plan.indexUsed ?? 'none (collection scan)'}</dd>
                </div>
                <div>
                  <dt>First stage</dt>
                  <dd>{plan.stage}</dd>
                </div>
                <div>
                  <dt>Documents examined</dt>
                  <dd>{plan.docsExamined ?? '—'}</dd>
                </div>
                <div>
                  <dt>Suggested index</dt>
                  <dd>{suggestion ? fieldsText(suggestion) : '—'}</dd>
                </div>
              </dl>
              {plan.indexUsed === 'unknown' && (
                <p className="hint">
                  This database does not report its plan as MongoDB does; whether an index serves
                  the query is read from the collection&apos;s indexes.
                </p>
              )}
              {suggestion && !serving && (
                <button
                  type="button"
                  className="primary"
                  disabled={create.busy}
                  onClick={() => create.run(suggestion)}
                >
                  Create the suggested index
                </button>
              )}
              <ActionError error={create.error} />
            </>
          );
        }}
      </Async>
    </section>
  );
}
