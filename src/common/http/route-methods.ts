/**
 * Which methods the registered routes serve at a path, read from the Express router. A request
 * that no route answers reaches Nest's not-found handler; when its path belongs to a route, the
 * answer is 405 with `Allow` rather than 404.
 */

/** The parts of an Express 5 router layer read here (router 2.x). */
interface RouterLayer {
  matchers?: ((path: string) => unknown)[];
  route?: { methods: Record<string, boolean | undefined> };
}

interface RouteEntry {
  matchers: ((path: string) => unknown)[];
  methods: string[];
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
    for (const entry of this.table()) {
      if (entry.matchers.some((match) => match(path) !== false)) {
        for (const method of entry.methods) methods.add(method);
      }
    }
    if (methods.size === 0) return null;
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  private table(): RouteEntry[] {
    if (this.entries) return this.entries;
    const entries: RouteEntry[] = [];
    for (const layer of (this.router()?.stack ?? []) as RouterLayer[]) {
      if (!layer.route || !layer.matchers) continue;
      const methods = Object.keys(layer.route.methods)
        .filter((m) => m !== '_all' && layer.route?.methods[m] === true)
        .map((m) => m.toUpperCase());
      entries.push({ matchers: layer.matchers, methods });
    }
    // An empty table means the app has not initialised yet: read the router again next time.
    if (entries.length > 0) this.entries = entries;
    return entries;
  }
}
