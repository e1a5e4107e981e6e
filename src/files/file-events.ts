import type { RecordedChange } from '../events';
import { FileDto } from './dto/file.dto';
import type { FileRecord } from './file-records.repository';

/** A file change as the feed records it: resource `file`, keyed by id, owned by its uploader. */
export function fileChange(type: 'created' | 'deleted', file: FileRecord): RecordedChange {
  return {
    resource: 'file',
    type,
    key: file.fileId,
    owner: file.owner,
    data: type === 'deleted' ? null : { ...FileDto.from(file) },
  };
}
