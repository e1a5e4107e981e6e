import { HttpStatus } from '@nestjs/common';
import type { Response } from 'express';
import { ifNoneMatchHits } from './etag';

/**
 * A handler's answer when it is more than a body: its response headers (ETag, Location, Link,
 * the routes' own), a status other than the route's (a 204 without results, a 304), or a
 * conditional read. A handler returns it as it would return its body and never touches the
 * platform response (only streaming handlers take `@Res`); JsonReplyAdapter writes it out
 * (`writeHead`) before the body, so an idempotent write keeps and replays its headers as before.
 * The route's status stays in `@HttpCode`, where the OpenAPI plugin reads it.
 */
export class Reply<T> {
  /** Name, value, name, value…: set in this order, before the ETag (none: a read's). */
  private headers: string[] | undefined;
  private etag: string | undefined;
  private status: number | undefined;

  private constructor(
    private readonly body: T | undefined,
    /** A conditional read's body, built only when it is sent. */
    private readonly render?: () => T,
  ) {}

  /** The body, with headers added by `header`. */
  static of<T>(body: T): Reply<T> {
    return new Reply(body);
  }

  /**
   * A single-resource read: `etag`, and 304 without a body when the request's If-None-Match
   * names it (GET and HEAD). `render` builds the body only when one is sent.
   */
  static read<T>(etag: string, render: () => T): Reply<T> {
    const reply = new Reply<T>(undefined, render);
    reply.etag = etag;
    return reply;
  }

  /** What a write made, with its ETag. */
  static written<T>(etag: string, body: T): Reply<T> {
    const reply = new Reply(body);
    reply.etag = etag;
    return reply;
  }

  /** A resource that `location` names (a created upload, a started move or erasure). */
  static located<T>(location: string, body: T): Reply<T> {
    return new Reply(body).header('Location', location);
  }

  /** A page of a list: `link` to the next (or previous) one, none when no page follows. */
  static page<T>(body: T, link: string | undefined): Reply<T> {
    return new Reply(body).header('Link', link);
  }

  /** 204 without a body (the route answers something else otherwise). */
  static noContent<T = never>(): Reply<T> {
    return new Reply<T>(undefined).withStatus(HttpStatus.NO_CONTENT);
  }

  /** Adds a response header; `undefined` adds none (a header the answer may go without). */
  header(name: string, value: string | undefined): this {
    if (value !== undefined) (this.headers ??= []).push(name, value);
    return this;
  }

  /** Answers `status` instead of the route's. */
  withStatus(status: HttpStatus): this {
    this.status = status;
    return this;
  }

  /**
   * Sets the status and the headers on `res`; the body to send (undefined: none). A malformed
   * If-None-Match of a conditional read is a 400 thrown before any header is set, so it carries
   * no ETag.
   */
  writeHead(res: Response): T | undefined {
    const { headers, etag, render } = this;
    const notModified =
      render !== undefined &&
      etag !== undefined &&
      ifNoneMatchHits(res.req.headers['if-none-match'], etag);
    if (headers !== undefined)
      for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
    if (etag !== undefined) res.setHeader('ETag', etag);
    if (notModified) {
      res.status(HttpStatus.NOT_MODIFIED);
      return undefined;
    }
    if (this.status !== undefined) res.status(this.status);
    return render === undefined ? this.body : render();
  }
}
