// `npm run test:client`: the flows of flows.ts, transfer-flows.ts, files-flows.ts and the others
// through the typed client, against the built service (dist/main.js) started on a free port with
// a fresh database and its own operator key.
import { after, before, describe, it } from 'node:test';
import { startService, type RunningService } from '../scripts/service';
import { rootFlow, subFlow, teamFlow } from './flows';
import { cursorsOfLinks, linksByRelation } from './links';
import { sha256Agrees } from './sha256';
import type { Target } from './support';
import {
  exportImportFlow,
  importLinesFlow,
  resumedExportFlow,
  resumedExportWithFilesFlow,
} from './transfer-flows';
import { collectionRulesFlow } from './rules-flows';
import { liveQueryFlow } from './live-flows';
import { filesFlow, subFilesFlow } from './files-flows';
import { planLimitsFlow } from './plans-flows';

const log = (message: string): void => void process.stdout.write(`# ${message}\n`);

void describe('typed client against the built service', { timeout: 180_000 }, () => {
  let service: RunningService | undefined;
  const target = (): Target => {
    if (!service) throw new Error('the service did not start');
    return service;
  };

  before(async () => {
    service = await startService(log);
  });
  after(async () => {
    await service?.stop();
  });

  void it('root: profile, projects, and data items from create to delete', () =>
    rootFlow(target()));
  void it('sub: a root mints a sub key; the sub edits only its own settings and data', () =>
    subFlow(target()));
  void it('team: the operator creates a team and its key; the team works per branch', () =>
    teamFlow(target()));
  void it('export, import into another user, export again: the same items and digest', () =>
    exportImportFlow(target()));
  void it('a cut export resumes after the last complete item: each item once, digest checked', () =>
    resumedExportFlow(target()));
  void it('a cut inside a file resumes from the last whole file: each line once, same end', () =>
    resumedExportWithFilesFlow(target()));
  void it('an import answers each line: a malformed line is a 400 and the import goes on', () =>
    importLinesFlow(target()));
  void it('collection rules: a schema enforced and warned, its violations listed, an expiry', () =>
    collectionRulesFlow(target()));
  void it('a live query: list with a filter, then the changes after its Feed-Position', () =>
    liveQueryFlow(target()));
  void it('files: uploads from a Blob, bytes and streams, ranges, ETags, a signed link, a delete', () =>
    filesFlow(target()));
  void it('files: a sub key sees only the files it uploaded; the root sees them all', () =>
    subFilesFlow(target()));
  void it('plans: a plan given by the operator shows in /me, and its limit refuses a write', () =>
    planLimitsFlow(target()));
});

void describe('the export check', () => {
  void it('digests as node:crypto does, however the bytes are split', () => sha256Agrees());
});

void describe('the Link header of a list page', () => {
  void it('lists the targets by relation type', () => linksByRelation());
  void it("gives the next page's after[…] and the previous page's before[…] cursor", () =>
    cursorsOfLinks());
});
