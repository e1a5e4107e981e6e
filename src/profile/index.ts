/**
 * What other modules may use of profiles: the module, its service, the profile JSON that the
 * operator API returns too, and the account-erasure port with the erasure it answers.
 */
export { PlanDto, ProfileDto } from './dto/profile.dto';
export { acceptedErasure, ERASURE_ACCEPTED, ErasureDto } from './dto/erasure.dto';
export { ProfileModule } from './profile.module';
export { ProfileService } from './profile.service';
export { ProfileExistsError } from './profile.errors';
export type { Plan, PlanInput, Profile } from './profile.types';
export { ProfileJson } from './profile-json';
export {
  ACCOUNT_ERASURE,
  type AccountErasure,
  type Erasure,
  type ErasureStatus,
} from './account-erasure.port';
