import { Router } from 'express';
import { RouteMethods } from './route-methods';

/** An Express router with a concrete route that a templated one also matches, and one that none does. */
function routes(): RouteMethods {
  const router = Router();
  const none = () => undefined;
  router.get('/profile/groups', none);
  router.put('/profile/groups', none);
  router.get('/profile/:accountId', none);
  router.delete('/profile/:accountId', none);
  router.get('/projects', none);
  return new RouteMethods(() => router);
}

describe('RouteMethods.shadowed', () => {
  it('tells a method the concrete path does not serve, which the templated route would take', () => {
    expect(routes().shadowed('/profile/groups', 'DELETE')).toBe(true);
  });

  it('compares paths as the router does: case and one trailing slash ignored', () => {
    const table = routes();
    expect(table.shadowed('/Profile/GROUPS', 'DELETE')).toBe(true);
    expect(table.shadowed('/profile/groups/', 'DELETE')).toBe(true);
    // Neither route matches a second trailing slash or another path.
    expect(table.shadowed('/profile/groups//', 'DELETE')).toBe(false);
    expect(table.shadowed('/profile/group', 'DELETE')).toBe(false);
    expect(table.shadowed('/profile/%67roups', 'DELETE')).toBe(false);
  });

  it('lets through what the concrete path serves and every other path', () => {
    const table = routes();
    expect(table.shadowed('/profile/groups', 'GET')).toBe(false);
    expect(table.shadowed('/profile/groups/', 'PUT')).toBe(false);
    expect(table.shadowed('/profile/someone', 'DELETE')).toBe(false);
    expect(table.shadowed('/projects', 'DELETE')).toBe(false);
  });
});
