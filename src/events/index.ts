/** What other modules may use of the change feed. */
export { EventsModule } from './events.module';
export { EventsService } from './events.service';
export type { FeedChange } from './feed-change';
export {
  actorOf,
  changeScopeOf,
  namespaceOfPrincipal,
  type ChangeScope,
  type RecordedChange,
  type ResourceLookup,
} from './event-scope';
export type { PlannedChange } from './event-intent.schema';
export { FeedMover } from './feed-mover';
export { priorOf } from './item-images';
export { DATA_SCOPE_OF_EVENT } from './live-query';
export type { LiveFilter, LiveFilterCompiler, NamedPath } from './live-filter';
export type { ItemAccessSource, ItemReadAccess } from './item-access';
