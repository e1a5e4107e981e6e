import { Injectable, type PipeTransform } from '@nestjs/common';
import { CollectionsService } from './collections.service';

/** The `{collection}` path segment: a valid collection name, else 400 INVALID_COLLECTION_NAME. */
@Injectable()
export class CollectionNamePipe implements PipeTransform<string, string> {
  transform(name: string): string {
    CollectionsService.checkName(name);
    return name;
  }
}
