import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { ValidationFailedError } from '../errors';
import { JsonReplyAdapter } from './json-reply.adapter';
import { Reply } from './reply';

const ETAG = '"665f1c2a9b1e8a0012345678.3"';

/**
 * An Express app whose one route answers `answer()` through JsonReplyAdapter, as Nest does with a
 * handler's value (the route's status set before, none passed to reply); an error is a 400 whose
 * body names its class, with whatever headers the response had by then.
 */
function appAnswering(answer: () => unknown, routeStatus = 200): express.Express {
  const adapter = new JsonReplyAdapter();
  const app = express();
  app.set('etag', false); // as the service (app.setup.ts): no tag Express makes up
  app.all('/r', (_req, res) => {
    res.status(routeStatus);
    adapter.reply(res, answer());
  });
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(400).json({ error: error.constructor.name });
  });
  return app;
}

describe('Reply through JsonReplyAdapter', () => {
  it('answers a conditional read with its body and ETag, rendered once', async () => {
    const render = jest.fn(() => ({ name: 'a' }));
    const res = await request(appAnswering(() => Reply.read(ETAG, render))).get('/r');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(ETAG);
    expect(res.body).toEqual({ name: 'a' });
    expect(res.headers['content-length']).toBe(String(JSON.stringify({ name: 'a' }).length));
    expect(render).toHaveBeenCalledTimes(1);
  });

  it('answers 304 with the ETag and without rendering when If-None-Match names it', async () => {
    const render = jest.fn(() => ({ name: 'a' }));
    const app = appAnswering(() => Reply.read(ETAG, render));
    for (const method of ['get', 'head'] as const) {
      const res = await request(app)[method]('/r').set('If-None-Match', `"x", ${ETAG}`);
      expect(res.status).toBe(304);
      expect(res.headers.etag).toBe(ETAG);
      expect(res.text ?? '').toBe('');
    }
    expect(render).not.toHaveBeenCalled();
  });

  it('refuses a malformed If-None-Match with no ETag on the refusal', async () => {
    const res = await request(appAnswering(() => Reply.read(ETAG, () => ({}))))
      .get('/r')
      .set('If-None-Match', 'not-a-tag');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: ValidationFailedError.name });
    expect(res.headers.etag).toBeUndefined();
  });

  it('answers HEAD of a read with its headers and no body', async () => {
    const res = await request(appAnswering(() => Reply.read(ETAG, () => ({ name: 'a' })))).head(
      '/r',
    );
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(ETAG);
    expect(res.headers['content-length']).toBe(String(JSON.stringify({ name: 'a' }).length));
  });

  it('sends the headers of a write, a located resource and a page, at the route status', async () => {
    const written = await request(
      appAnswering(() => Reply.written(ETAG, { id: 1 }).header('X-Item-Created', 'true')),
    ).post('/r');
    expect(written.status).toBe(200);
    expect(written.headers.etag).toBe(ETAG);
    expect(written.headers['x-item-created']).toBe('true');
    expect(written.body).toEqual({ id: 1 });

    const located = await request(
      appAnswering(() => Reply.located('/admin/moves/1', { id: '1' }), 202),
    ).post('/r');
    expect(located.status).toBe(202);
    expect(located.headers.location).toBe('/admin/moves/1');
    expect(located.body).toEqual({ id: '1' });

    const page = await request(appAnswering(() => Reply.page([1], '</r?after=1>; rel="next"'))).get(
      '/r',
    );
    expect(page.headers.link).toBe('</r?after=1>; rel="next"');
    expect(page.body).toEqual([1]);
  });

  it('adds no header for an undefined value (a last page, no warnings)', async () => {
    const res = await request(
      appAnswering(() => Reply.page([1], undefined).header('Schema-Warnings', undefined)),
    ).get('/r');
    expect(res.headers.link).toBeUndefined();
    expect(res.headers['schema-warnings']).toBeUndefined();
    expect(res.body).toEqual([1]);
  });

  it('answers noContent with 204 and its headers in place of the route status', async () => {
    const res = await request(
      appAnswering(() => Reply.noContent().header('Feed-Position', '12'), 200),
    ).get('/r');
    expect(res.status).toBe(204);
    expect(res.headers['feed-position']).toBe('12');
    expect(res.text ?? '').toBe('');
  });

  it('leaves a value that is not a Reply as it is', async () => {
    const res = await request(appAnswering(() => ({ plain: true }))).get('/r');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ plain: true });
    expect(res.headers.etag).toBeUndefined();
  });
});
