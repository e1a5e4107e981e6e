import { revisionETag } from '../common/http/etag';
import type { Profile } from './profile.types';

/** A profile's ETag: its id (new for every profile) and its revision. */
export function profileETag(profile: Profile): string {
  return revisionETag({ identity: profile.id, revision: profile.revision });
}
