import { Inject, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { FallbackWriteQueue } from '../common/mongo/fallback-database';
import { DataModule } from '../data/data.module';
import { EventsModule } from '../events';
import { ProfileController } from './profile.controller';
import { ProfilesController } from './profiles.controller';
import { profileJsonLimits, useProfileJsonLimits } from './profile-json';
import { ProfileRepository } from './profile.repository';
import { ProfileDocument, ProfileSchema, UserDocument, UserSchema } from './profile.schema';
import { ProfileService } from './profile.service';
import { ProfileUpdateService } from './profile-update.service';
import { ProfileDeletionService } from './profile-deletion.service';
import { ProfileEvents } from './profile-events';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: ProfileDocument.name, schema: ProfileSchema },
      { name: UserDocument.name, schema: UserSchema },
    ]),
    // Deleting a sub profile with purgeData deletes the items it owned.
    DataModule,
    // Profile changes go to the change feed.
    EventsModule,
  ],
  controllers: [ProfileController, ProfilesController],
  providers: [
    ProfileRepository,
    ProfileService,
    ProfileUpdateService,
    ProfileDeletionService,
    ProfileEvents,
    // One queue of writes per profile, shared by every service that writes profiles.
    { provide: FallbackWriteQueue, useFactory: () => new FallbackWriteQueue() },
  ],
  exports: [ProfileService],
})
export class ProfileModule {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    useProfileJsonLimits(profileJsonLimits(config));
  }
}
