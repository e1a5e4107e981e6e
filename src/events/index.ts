/** What other modules may use of the change feed. */
export { EventsModule } from './events.module';
export {
  EventsService,
  actorOf,
  changeScopeOf,
  type ChangeScope,
  type RecordedChange,
  type ResourceLookup,
} from './events.service';
export type { PlannedChange } from './event-intent.schema';
