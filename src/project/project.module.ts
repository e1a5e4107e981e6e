import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EventsModule } from '../events';
import { ProjectController } from './project.controller';
import { ProjectRepository } from './project.repository';
import { ProjectDocument, ProjectSchema } from './project.schema';
import { ProjectService } from './project.service';

@Module({
  imports: [
    MongooseModule.forFeature([{ name: ProjectDocument.name, schema: ProjectSchema }]),
    // Project changes go to the change feed.
    EventsModule,
  ],
  controllers: [ProjectController],
  providers: [ProjectRepository, ProjectService],
  exports: [ProjectService],
})
export class ProjectModule {}
