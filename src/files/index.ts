export { FilesModule } from './files.module';
export { FilesService } from './files.service';
export { FileUploads, type KeptFile, type UploadInput } from './file-uploads';
export { FileRestores, type IdHolder } from './file-restores';
export { FileContents } from './file-contents';
export { FileRecordsRepository, type FileRecord } from './file-records.repository';
export { FileDto } from './dto/file.dto';
export { checkName, checkType } from './upload-body';
export { FileExistsError, FileIdTakenError, FileQuotaExceededError } from './files.errors';
