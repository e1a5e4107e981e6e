import type { IncomingMessage } from 'node:http';
import { routeLabelOf, UNMATCHED_ROUTE } from './http-metrics';

const request = (route?: unknown) => ({ route }) as unknown as IncomingMessage;

describe('routeLabelOf', () => {
  it('is the template of the route that matched', () => {
    expect(routeLabelOf(request({ path: '/data/:collection' }))).toBe('/data/:collection');
  });

  it('is the one unmatched label without a route, or for a catch-all mount', () => {
    expect(routeLabelOf(request())).toBe(UNMATCHED_ROUTE);
    expect(routeLabelOf(request({ path: '/{*path}' }))).toBe(UNMATCHED_ROUTE);
    expect(routeLabelOf(request({ path: /regex/ }))).toBe(UNMATCHED_ROUTE);
  });
});
