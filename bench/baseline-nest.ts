// The framework floor: the baseline's GET by _id and POST on NestJS 11 with Express, as the
// service is built, and nothing of the service. Helmet's headers, Nest's body parser, a guard
// for the key (the baseline's lookup and cache, baseline-core.ts), a global ValidationPipe
// (whitelist, transform) with a class-validator DTO for the body, a controller, Nest's own JSON
// answer. Its CPU per request beside the baseline's is what these choices cost before any of the
// service's own work (auth roles, the rate limit, tenancy, the change feed, the problem answers).
//
// Environment: PORT and those of baseline-core.ts.
import 'reflect-metadata';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
  ValidationPipe,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsObject } from 'class-validator';
import type { Request, Response } from 'express';
import helmet from 'helmet';
import type { Document, Filter } from 'mongodb';
import {
  authenticate,
  client,
  collectionOf,
  countRequest,
  HttpError,
  idValue,
  isDuplicateKey,
  metricsText,
  newDocument,
  type Entry,
  type StoredKey,
} from './baseline-core';

type KeyedRequest = Request & { principal?: StoredKey };

/** The baseline's refusals as Nest's exceptions. */
function refused(status: number, message: string): HttpException {
  return new HttpException({ status, detail: message }, status);
}

@Injectable()
class KeyGuard implements CanActivate {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<KeyedRequest>();
    try {
      req.principal = await authenticate(req);
    } catch (error) {
      if (error instanceof HttpError) throw refused(error.status, error.message);
      throw error;
    }
    return true;
  }
}

class NewItemBody {
  @IsObject()
  item!: Record<string, unknown>;
}

function entryOf(name: string): Entry {
  const entry = collectionOf(name);
  if (!entry) throw refused(404, 'unknown collection');
  return entry;
}

@Controller()
class FloorController {
  @Get('health')
  health(): { status: string } {
    return { status: 'ok' };
  }

  @Get('metrics')
  metrics(@Res() res: Response): void {
    res.type('text/plain; version=0.0.4').send(metricsText());
  }

  @Get('data/:collection/:field/:value')
  @UseGuards(KeyGuard)
  async byId(
    @Param('collection') collection: string,
    @Param('field') field: string,
    @Param('value') value: string,
  ): Promise<unknown> {
    const entry = entryOf(collection);
    if (field !== '_id') throw refused(404, 'the floor reads by _id only');
    // A string _id (the service's item ids) is outside the driver's default typing.
    const filter = { _id: idValue(entry, value) } as Filter<Document>;
    const item = await entry.native.findOne(filter);
    if (!item) throw refused(404, 'no such item');
    return item;
  }

  @Post('data/:collection')
  @HttpCode(200)
  @UseGuards(KeyGuard)
  async create(
    @Param('collection') collection: string,
    @Body() body: NewItemBody,
    @Req() req: KeyedRequest,
  ): Promise<unknown> {
    const entry = entryOf(collection);
    const doc = newDocument(entry, req.principal ?? {}, body.item);
    try {
      await entry.native.insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw refused(409, 'duplicate');
      throw error;
    }
    return doc;
  }
}

@Module({ controllers: [FloorController], providers: [KeyGuard] })
class FloorModule {}

async function main(): Promise<void> {
  await client.connect();
  const app = await NestFactory.create(FloorModule, { logger: ['error', 'warn'] });
  app.use((req: Request, res: Response, next: () => void) => {
    countRequest(req, res);
    next();
  });
  app.use(helmet());
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  const port = Number(process.env.PORT);
  await app.listen(port, '127.0.0.1');
  process.stdout.write(`framework floor listening on ${port}\n`);
  const shutdown = (): void => {
    void app
      .close()
      .then(() => client.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
