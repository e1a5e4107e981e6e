import { revisionETag } from '../common/http/etag';
import type { Project } from './project.types';

/** A project's ETag: its id (new for every project) and its revision. */
export function projectETag(project: Project): string {
  return revisionETag({ identity: project.id, revision: project.revision });
}
