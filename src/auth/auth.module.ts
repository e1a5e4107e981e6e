import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileModule } from '../profile/profile.module';
import { ApiKeyController } from './api-key.controller';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeyDocument, ApiKeySchema } from './api-key.schema';
import { ApiKeyService } from './api-key.service';
import { AuthFailureLimiter } from './auth-failure.limiter';
import { AuthFailureRepository } from './auth-failure.repository';
import { AuthFailureDocument, AuthFailureSchema } from './auth-failure.schema';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: ApiKeyDocument.name, schema: ApiKeySchema },
      { name: AuthFailureDocument.name, schema: AuthFailureSchema },
    ]),
    ProfileModule,
  ],
  controllers: [ApiKeyController],
  providers: [
    ApiKeyRepository,
    ApiKeyService,
    AuthFailureRepository,
    AuthFailureLimiter,
    ApiKeyGuard,
  ],
  exports: [ApiKeyService, ApiKeyGuard],
})
export class AuthModule {}
