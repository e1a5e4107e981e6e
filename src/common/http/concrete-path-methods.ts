import { NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { ProblemRenderer } from '../errors';
import type { RouteMethods } from './route-methods';

/**
 * Before routing: 405 with `Allow` for a method the concrete path does not serve, where the
 * router alone would have handed the request to a templated route.
 */
export function concretePathMethods(routes: RouteMethods, renderer: ProblemRenderer) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (routes.shadowed(req.path, req.method)) renderer.send(new NotFoundException(), req, res);
    else next();
  };
}
