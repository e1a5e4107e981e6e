/**
 * What other modules may use of profiles: the module, its service, and the profile JSON that
 * the operator API returns too. Everything else is the profile module's own.
 */
export { ProfileDto } from './dto/profile.dto';
export { ProfileModule } from './profile.module';
export { ProfileService } from './profile.service';
export type { PlanInput, Profile } from './profile.types';
