import { RequestMethod, UseInterceptors, type NestInterceptor, type Type } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';

/** The route methods that write: POST, PUT, PATCH and DELETE. */
export const WRITE_METHODS: ReadonlySet<RequestMethod> = new Set([
  RequestMethod.POST,
  RequestMethod.PUT,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
]);

/** Puts `interceptor` on every write route (WRITE_METHODS) of the controller, and on nothing else. */
export function onWriteRoutes(interceptor: Type<NestInterceptor>): ClassDecorator {
  return (target) => {
    const prototype = (target as unknown as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      const handler: unknown = descriptor?.value;
      if (!descriptor || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method !== undefined && WRITE_METHODS.has(method))
        UseInterceptors(interceptor)(prototype, name, descriptor);
    }
  };
}
