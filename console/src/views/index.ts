import { dataViews } from './data';
import { opsViews } from './ops';
import { overviewViews } from './overview';
import type { ConsoleView } from './registry';

/** Every view, in navigation order. */
export const VIEWS: readonly ConsoleView[] = [...overviewViews, ...dataViews, ...opsViews];
