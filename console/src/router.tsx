import { useEffect, useState, type ReactNode } from 'react';

/**
 * The console's routes live in the URL's fragment (`#/data/orders`), so the service serves one
 * page for every view and a reload keeps the view. Nothing secret is ever put in the fragment.
 */
export function currentPath(): string {
  const hash = window.location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

export function useRoute(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const changed = () => setPath(currentPath());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return path;
}

export function navigate(path: string): void {
  window.location.hash = path;
}

/** A path segment for a route: names and ids may hold any character. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

/**
 * Matches `path` against a pattern such as `/data/:collection/items/:id`; the parameters come
 * back decoded, or undefined when the path is something else.
 */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const have = path.split('?')[0]!.split('/');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const value = have[index]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (part !== value) return undefined;
  }
  return params;
}

export function Link(props: { to: string; children: ReactNode; className?: string }) {
  return (
    <a href={`#${props.to}`} className={props.className}>
      {props.children}
    </a>
  );
}
