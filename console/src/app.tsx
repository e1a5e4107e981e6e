import { useEffect, useMemo, useState } from 'react';
import { ApiProvider, clientFor, clientOptions, unwrap, type Api, type Me } from './api';
import { ContextBar } from './context-bar';
import { match, navigate, useRoute } from './router';
import { clearSession, loadSession, saveSession, type Session } from './session';
import { SignIn } from './sign-in';
import { Loading } from './ui/async';
import { ProblemView } from './ui/problem';
import { VIEWS } from './views';

type Signed = { session: Session; me: Me };

/** The console: the sign-in form until a key is given, then the views that key may use. */
export function App() {
  const [signed, setSigned] = useState<Signed | undefined>(undefined);
  const [restoring, setRestoring] = useState(() => loadSession() !== undefined);
  const [restoreError, setRestoreError] = useState<unknown>(undefined);

  // A reload keeps the tab's key: ask GET /me again with it.
  useEffect(() => {
    const session = loadSession();
    if (!session) return;
    unwrap(clientFor(session).GET('/me')).then(
      (me) => {
        setSigned({ session, me });
        setRestoring(false);
      },
      (error: unknown) => {
        clearSession();
        setRestoreError(error);
        setRestoring(false);
      },
    );
  }, []);

  const signIn = (session: Session, me: Me) => {
    saveSession(session);
    setRestoreError(undefined);
    setSigned({ session, me });
  };
  const signOut = () => {
    clearSession();
    setSigned(undefined);
    navigate('/');
  };

  if (restoring) return <Loading text="Signing in…" />;
  if (!signed)
    return (
      <>
        <SignIn onSignedIn={signIn} />
        {restoreError !== undefined && <ProblemView error={restoreError} />}
      </>
    );
  return <Shell signed={signed} onChange={signIn} onSignOut={signOut} />;
}

function Shell(props: {
  signed: Signed;
  onChange: (session: Session, me: Me) => void;
  onSignOut: () => void;
}) {
  const { session, me } = props.signed;
  const path = useRoute();
  const api: Api = useMemo(
    () => ({ client: clientFor(session), options: clientOptions(session), session, me }),
    [session, me],
  );
  const views = VIEWS.filter((view) => !view.nav || view.nav.kinds.includes(me.kind));
  const routed = views
    .map((view) => ({ view, params: match(view.pattern, path) }))
    .find((found) => found.params !== undefined);
  return (
    <ApiProvider value={api}>
      <a className="skip" href="#main" onClick={(event) => skipToMain(event)}>
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Console</span>
        <ContextBar onChange={props.onChange} />
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <div className="layout">
        <nav aria-label="Views">
          <ul>
            {views
              .filter((view) => view.nav)
              .map((view) => (
                <li key={view.pattern}>
                  <a
                    href={`#${view.pattern}`}
                    aria-current={routed?.view === view ? 'page' : undefined}
                  >
                    {view.nav?.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {routed ? (
            // A new key, branch or team starts every view afresh.
            <div key={`${session.apiKey}|${session.branch}|${session.team}`}>
              {routed.view.render(routed.params ?? {})}
            </div>
          ) : (
            <section>
              <h1>Not found</h1>
              <p>This console has no view at {path} for this key.</p>
            </section>
          )}
        </main>
      </div>
    </ApiProvider>
  );
}

/** The skip link moves focus without touching the fragment, which holds the route. */
function skipToMain(event: { preventDefault: () => void }) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}
