import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileModule } from '../profile/profile.module';
import { ApiKeyController } from './api-key.controller';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeyDocument, ApiKeySchema } from './api-key.schema';
import { ApiKeyService } from './api-key.service';

@Module({
  imports: [
    MongooseModule.forFeature([{ name: ApiKeyDocument.name, schema: ApiKeySchema }]),
    ProfileModule,
  ],
  controllers: [ApiKeyController],
  providers: [ApiKeyRepository, ApiKeyService, ApiKeyGuard],
  exports: [ApiKeyService, ApiKeyGuard],
})
export class AuthModule {}
