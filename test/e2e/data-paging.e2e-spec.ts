import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

/** Keyset paging of data items through the shared pagination module: next, prev and ranges. */
let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp(__filename);
  user = await createUser(t);
  for (let n = 1; n <= 7; n += 1) {
    await t
      .http()
      .post('/data/pages')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id: `i${n}`, n, group: n % 2 === 0 ? 'even' : 'odd' } })
      .expect(200);
  }
});
afterAll(async () => t.close());

const get = (query: string) => t.http().get(`/data/pages?${query}`).set('X-Api-Key', user.apiKey);
const ns = (body: unknown) => (body as { n: number }[]).map((i) => i.n);
const linkOf = (header: string | undefined, rel: 'next' | 'prev') =>
  new RegExp(`<([^>]+)>; rel="${rel}"`).exec(header ?? '')?.[1];

it('walks forwards with rel="next" links and ends without one', async () => {
  const first = await get('sort=n&sortOrder=asc&limit=3').expect(200);
  expect(ns(first.body)).toEqual([1, 2, 3]);
  const next = linkOf(first.headers.link, 'next');
  expect(next).toContain('after%5Bn%5D=3');
  expect(next).toContain('after%5B_id%5D=i3');
  const second = await t
    .http()
    .get(next ?? '')
    .set('X-Api-Key', user.apiKey)
    .expect(200);
  expect(ns(second.body)).toEqual([4, 5, 6]);
  const third = await t
    .http()
    .get(linkOf(second.headers.link, 'next') ?? '')
    .set('X-Api-Key', user.apiKey)
    .expect(200);
  expect(ns(third.body)).toEqual([7]);
  expect(third.headers.link).toBeUndefined();
});

it('returns the page right before a before[] cursor, in the requested order, with rel="prev"', async () => {
  const page = await get('sort=n&sortOrder=asc&limit=2&before[n]=6&before[_id]=i6').expect(200);
  expect(ns(page.body)).toEqual([4, 5]);
  const prev = linkOf(page.headers.link, 'prev');
  expect(prev).toContain('before%5Bn%5D=4');
  const earlier = await t
    .http()
    .get(prev ?? '')
    .set('X-Api-Key', user.apiKey)
    .expect(200);
  expect(ns(earlier.body)).toEqual([2, 3]);
  const first = await t
    .http()
    .get(linkOf(earlier.headers.link, 'prev') ?? '')
    .set('X-Api-Key', user.apiKey)
    .expect(200);
  expect(ns(first.body)).toEqual([1]);
  expect(first.headers.link).toBeUndefined();
});

it('takes after[] and before[] together as a range', async () => {
  const res = await get('sort=n&sortOrder=desc&after[n]=6&before[n]=2').expect(200);
  expect(ns(res.body)).toEqual([5, 4, 3]);
});

it('keeps filters in the links', async () => {
  const res = await get('group=odd&sort=n&sortOrder=asc&limit=2').expect(200);
  expect(ns(res.body)).toEqual([1, 3]);
  const next = linkOf(res.headers.link, 'next') ?? '';
  expect(next).toContain('group=odd');
  const rest = await t.http().get(next).set('X-Api-Key', user.apiKey).expect(200);
  expect(ns(rest.body)).toEqual([5, 7]);
});

it('reads timestamp cursors with the strict RFC 3339 parser', async () => {
  const bad = await get('sort=_createdAt&after[_createdAt]=2026-02-30T00:00:00Z').expect(400);
  expect(bad.body.errors).toEqual([
    {
      field: 'after[_createdAt]',
      message: 'must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05.678Z',
    },
  ]);
  const all = await get('sort=_createdAt&sortOrder=asc&after[_createdAt]=2000-01-01T00:00:00Z');
  expect(ns(all.body)).toHaveLength(7);
});

it('names the allowed cursor fields when one is wrong', async () => {
  const res = await get('sort=n&after[m]=1').expect(400);
  expect(res.body.errors[0]).toEqual({
    field: 'after[m]',
    message: 'must name the sort field (sort=n) or _id; add sort=m to page by m',
  });
});
