import type { ConsoleView } from '../registry';

/** Export/import, files, webhooks, keys, and the operator's views. */
export const opsViews: ConsoleView[] = [];
