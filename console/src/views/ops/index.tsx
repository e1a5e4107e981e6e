import type { ReactNode } from 'react';
import { OPERATOR_KINDS, type ConsoleView, type KeyKind } from '../registry';
import { ErasureView, ErasuresView } from './admin-erasures';
import { AdminMoveView, AdminMovesView } from './admin-moves';
import { AdminPlansView } from './admin-plans';
import { AdminClustersView, AdminTeamsView } from './admin-teams';
import { AdminUserView, AdminUsersView } from './admin-users';
import { DeliveriesView } from './deliveries';
import { FilesView } from './files';
import { KeysView } from './keys';
import { OnlyFor } from './only-for';
import { TransferView } from './transfer';
import { WebhooksView } from './webhooks';
import './ops.css';

/** Who may call what (docs/keys.md, "Authentication and principals"; each route's @Auth). */
const TRANSFER_KINDS: readonly KeyKind[] = ['root', 'sub', 'team'];
const FILE_KINDS: readonly KeyKind[] = ['root', 'sub', 'team'];
const WEBHOOK_KINDS: readonly KeyKind[] = ['root', 'team'];
/** /api-keys and /teams/{id}/api-keys are for root keys only; a team's keys for its admins. */
const KEY_KINDS: readonly KeyKind[] = ['root'];

/** A view with a navigation entry for `kinds`. */
function listed(
  pattern: string,
  label: string,
  kinds: readonly KeyKind[],
  render: () => ReactNode,
): ConsoleView {
  return { pattern, render, nav: { label, kinds } };
}

/** A detail view: no navigation entry, and shown to `kinds` only. */
function detail(
  pattern: string,
  kinds: readonly KeyKind[],
  render: (params: Record<string, string>) => ReactNode,
): ConsoleView {
  return { pattern, render: (params) => <OnlyFor kinds={kinds}>{render(params)}</OnlyFor> };
}

/** Export/import, files, webhooks, keys, and the operator's views. */
export const opsViews: ConsoleView[] = [
  listed('/transfer', 'Export / import', TRANSFER_KINDS, () => <TransferView />),
  listed('/files', 'Files', FILE_KINDS, () => <FilesView />),
  listed('/webhooks', 'Webhooks', WEBHOOK_KINDS, () => <WebhooksView />),
  detail('/webhooks/:id', WEBHOOK_KINDS, (params) => <DeliveriesView id={params.id ?? ''} />),
  listed('/keys', 'API keys', KEY_KINDS, () => <KeysView />),
  listed('/admin/users', 'Users', OPERATOR_KINDS, () => <AdminUsersView />),
  detail('/admin/users/:subject', OPERATOR_KINDS, (params) => (
    <AdminUserView subject={params.subject ?? ''} />
  )),
  listed('/admin/plans', 'Plans', OPERATOR_KINDS, () => <AdminPlansView />),
  listed('/admin/erasures', 'Erasures', OPERATOR_KINDS, () => <ErasuresView />),
  detail('/admin/erasures/:id', OPERATOR_KINDS, (params) => <ErasureView id={params.id ?? ''} />),
  listed('/admin/teams', 'Teams', OPERATOR_KINDS, () => <AdminTeamsView />),
  listed('/admin/clusters', 'Clusters', OPERATOR_KINDS, () => <AdminClustersView />),
  listed('/admin/moves', 'Tenant moves', OPERATOR_KINDS, () => <AdminMovesView />),
  detail('/admin/moves/:id', OPERATOR_KINDS, (params) => <AdminMoveView id={params.id ?? ''} />),
];
