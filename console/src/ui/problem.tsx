import { ApiProblemError } from '@profile-data/client';

/**
 * A failure as the user sees it: the problem's title and detail (RFC 9457), its code and the
 * trace id to quote. Always rendered as text: a problem's detail may repeat what a user sent.
 */
export function ProblemView(props: { error: unknown; onRetry?: () => void }) {
  const { error } = props;
  let title = 'Something went wrong';
  let detail = error instanceof Error ? error.message : String(error);
  let meta: string | undefined;
  if (error instanceof ApiProblemError) {
    if (error.problem) {
      title = error.problem.title;
      detail = error.problem.detail;
      meta = `${error.problem.status} ${error.problem.code} · trace ${error.problem.traceId}`;
    } else {
      title = `HTTP ${error.status}`;
      detail = 'The service answered without a problem description.';
    }
  } else if (error instanceof TypeError) {
    title = 'The service cannot be reached';
  }
  return (
    <div className="problem" role="alert">
      <strong className="problem-title">{title}</strong>
      <p className="problem-detail">{detail}</p>
      {meta && <p className="problem-meta">{meta}</p>}
      {props.onRetry && (
        <button type="button" onClick={props.onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
