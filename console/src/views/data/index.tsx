import type { ConsoleView } from '../registry';

/** Collections, items, indexes, the live panel, schema and expiry. */
export const dataViews: ConsoleView[] = [];
