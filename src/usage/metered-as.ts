import { SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { RequestClass } from './usage-counts';

export const METERED_AS = 'usage:class';

/** A route's class, or how to tell it from the request (a long poll is a stream, a page a read). */
export type MeteredClass = RequestClass | ((req: Request) => RequestClass);

/**
 * The class a route's requests are counted in. Without it: GET and HEAD are reads, every other
 * method a write. Streams (their open time is counted too), exports and imports say so.
 */
export const MeteredAs = (metered: MeteredClass): MethodDecorator & ClassDecorator =>
  SetMetadata(METERED_AS, metered);
