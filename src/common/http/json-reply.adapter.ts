import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';
import { Reply } from './reply';

/** Statuses whose answers carry no body (Express strips it); 205 too. */
const BODILESS = new Set([204, 205, 304]);

/**
 * Nest's Express adapter, but a handler's JSON object is written straight to the response
 * (`JSON.stringify`, Content-Type, Content-Length, `end`) instead of through Express's `res.json`
 * and `res.send`, which re-parse the Content-Type to add its charset, look for an ETag function
 * and test freshness on every answer — some 3 % of the CPU of a GET by _id. Every answer whose
 * handling by Express could differ goes the usual way: HEAD, bodiless statuses, a Content-Type
 * the handler chose, and a request with validators (If-None-Match, If-Modified-Since), which
 * Express may turn into a 304. A handler's Reply puts its status and headers on the response
 * first, then its body goes the same way.
 */
export class JsonReplyAdapter extends ExpressAdapter {
  override reply(response: Response, answer: unknown, statusCode?: number): unknown {
    if (!(answer instanceof Reply)) return this.send(response, answer, statusCode);
    // The route's status first: the reply's own (a 204, a 304) replaces it.
    if (statusCode) response.status(statusCode);
    return this.send(response, answer.writeHead(response));
  }

  private send(response: Response, body: unknown, statusCode?: number): unknown {
    const json = writesDirectly(response, body, statusCode) ? JSON.stringify(body) : undefined;
    if (json === undefined) return super.reply(response, body, statusCode);
    if (statusCode) response.statusCode = statusCode;
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(json));
    response.end(json);
    return response;
  }
}

function writesDirectly(response: Response, body: unknown, statusCode?: number): boolean {
  if (typeof body !== 'object' || body === null) return false;
  if (body instanceof StreamableFile || body instanceof Error || ArrayBuffer.isView(body))
    return false;
  if (BODILESS.has(statusCode ?? response.statusCode)) return false;
  const { method, headers } = response.req;
  return (
    method !== 'HEAD' &&
    response.getHeader('Content-Type') === undefined &&
    headers['if-none-match'] === undefined &&
    headers['if-modified-since'] === undefined
  );
}
