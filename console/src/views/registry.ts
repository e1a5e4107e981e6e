import type { ReactNode } from 'react';
import type { Me } from '../api';

/** A principal kind as GET /me names it. */
export type KeyKind = Me['kind'];

/**
 * One view of the console: the route it answers (`/data/:collection`), what it renders for the
 * route's parameters, and, when it has one, its entry in the navigation for the kinds of key
 * that may use it. The groups of views register themselves in views/index.ts.
 */
export interface ConsoleView {
  pattern: string;
  render: (params: Record<string, string>) => ReactNode;
  nav?: { label: string; kinds: readonly KeyKind[] };
}

export const TENANT_KINDS: readonly KeyKind[] = ['root', 'sub', 'team'];
export const OPERATOR_KINDS: readonly KeyKind[] = ['operator'];
