/**
 * Which methods the registered routes serve at a path, read from the Express router. A request
 * that no route answers reaches Nest's not-found handler; when its path belongs to a route, the
 * answer is 405 with `Allow` rather than 404.
 *
 * As in OpenAPI, a concrete path comes before a templated one that also matches it: at
 * /profile/groups only the routes of /profile/groups count, not GET /profile/{accountId}.
 */

/** The parts of an Express 5 router layer read here (router 2.x). */
interface RouterLayer {
  matchers?: ((path: string) => unknown)[];
  route?: { path?: unknown; methods: Record<string, boolean | undefined> };
}

interface RouteEntry {
  matchers: ((path: string) => unknown)[];
  methods: string[];
  /** A path without parameters. */
  concrete: boolean;
}

/**
 * What the router compares of a path to a concrete route's: case ignored, one trailing slash
 * ignored (Express's defaults: no case-sensitive or strict routing). A concrete route's matcher
 * is a case-insensitive regular expression of the route's own ASCII characters, which matches a
 * path only when their keys are equal (no other character compares equal to an ASCII one).
 */
function routerKey(path: string): string {
  const key = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return key.toLowerCase();
}

function matches(entry: RouteEntry, path: string): boolean {
  return entry.matchers.some((match) => match(path) !== false);
}

export class RouteMethods {
  /** Built on first use: routes are registered when the app initialises, after configureApp. */
  private entries: RouteEntry[] | null = null;

  constructor(private readonly router: () => { stack?: unknown[] } | undefined) {}

  /**
   * The methods served at `path` (HEAD with GET), or null when no route has it. OPTIONS is not
   * among them: only CORS preflights are answered, by the CORS middleware in front of the routes.
   */
  allowed(path: string): string[] | null {
    const methods = new Set<string>();
    const matching = this.table().filter((entry) => matches(entry, path));
    const concrete = matching.filter((entry) => entry.concrete);
    for (const entry of concrete.length > 0 ? concrete : matching) {
      for (const method of entry.methods) methods.add(method);
    }
    if (methods.size === 0) return null;
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  /**
   * Whether the router would hand this request to a templated route although the concrete path
   * it names does not serve the method (GET /profile/groups is not GET /profile/{accountId}).
   */
  shadowed(path: string, method: string): boolean {
    this.table();
    if (!this.shadowingPaths.has(routerKey(path))) return false;
    if (!this.shadowing.some((entry) => matches(entry, path))) return false;
    return !(this.allowed(path) ?? []).includes(method);
  }

  /** Concrete routes that a templated route also matches; usually none or a few. */
  private shadowing: RouteEntry[] = [];

  /**
   * Their paths as `routerKey` gives them: a path outside this set matches none of them, so
   * most requests are told apart by one lookup instead of running each one's matcher.
   */
  private shadowingPaths = new Set<string>();

  private table(): RouteEntry[] {
    if (this.entries) return this.entries;
    const entries: (RouteEntry & { path: unknown })[] = [];
    for (const layer of (this.router()?.stack ?? []) as RouterLayer[]) {
      if (!layer.route || !layer.matchers) continue;
      const methods = Object.keys(layer.route.methods)
        .filter((m) => m !== '_all' && layer.route?.methods[m] === true)
        .map((m) => m.toUpperCase());
      const path = layer.route.path;
      const concrete = typeof path === 'string' && !/[:*{(]/.test(path);
      entries.push({ matchers: layer.matchers, methods, concrete, path });
    }
    // An empty table means the app has not initialised yet: read the router again next time.
    if (entries.length > 0) {
      this.entries = entries;
      const shadowing = entries.filter(
        (entry) =>
          entry.concrete &&
          entries.some((other) => !other.concrete && matches(other, entry.path as string)),
      );
      this.shadowing = shadowing;
      this.shadowingPaths = new Set(shadowing.map((entry) => routerKey(entry.path as string)));
    }
    return entries;
  }
}
