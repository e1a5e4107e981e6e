import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileDocument, ProfileSchema, UserDocument, UserSchema } from './profile.schema';
import { ProfileController } from './profile.controller';
import { ProfileRepository } from './profile.repository';
import { ProfileService } from './profile.service';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: ProfileDocument.name, schema: ProfileSchema },
      { name: UserDocument.name, schema: UserSchema },
    ]),
  ],
  controllers: [ProfileController],
  providers: [ProfileRepository, ProfileService],
  exports: [ProfileService],
})
export class ProfileModule {}
