/**
 * The signed-in key and the context it acts in. Kept in sessionStorage only: it lives as long as
 * the tab, never in a URL, a log or localStorage, and sign-out removes it.
 */
export interface Session {
  /** The API key, sent as X-Api-Key. */
  apiKey: string;
  /** The request branch (X-Branch); '' = the standard branch. */
  branch: string;
  /** The team a member's root key acts for (X-Team); '' = none. */
  team: string;
}

const STORAGE_KEY = 'console.session';

export function loadSession(): Session | undefined {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (stored === null) return undefined;
  try {
    const value: unknown = JSON.parse(stored);
    if (typeof value !== 'object' || value === null) return undefined;
    const fields: Record<string, unknown> = { ...value };
    if (typeof fields.apiKey !== 'string' || fields.apiKey === '') return undefined;
    return {
      apiKey: fields.apiKey,
      branch: typeof fields.branch === 'string' ? fields.branch : '',
      team: typeof fields.team === 'string' ? fields.team : '',
    };
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** Where the API is: the console is served at <base>/console, so the API is at <base>. */
export function apiBaseUrl(): string {
  const { origin, pathname } = window.location;
  return origin + pathname.replace(/\/console(\/.*)?$/, '');
}
