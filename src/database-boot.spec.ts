import { ApiKeySchema } from './auth/api-key.schema';
import { databaseAddress, SERVICE_MARKER_COLLECTIONS } from './database-boot';
import { ProfileSchema, UserSchema } from './profile/profile.schema';

describe('database boot', () => {
  it('recognises a deployment by collections the service really has', () => {
    const collections = [UserSchema, ApiKeySchema, ProfileSchema].map((s) => s.get('collection'));
    expect([...SERVICE_MARKER_COLLECTIONS].sort()).toEqual(collections.sort());
  });

  it.each([
    ['mongodb://u:secret@db1:27017,db2:27018/app?replicaSet=rs0', 'db1:27017,db2:27018'],
    ['mongodb+srv://u:secret@cluster.example.net/app', 'cluster.example.net'],
    ['mongodb://127.0.0.1:4000/', '127.0.0.1:4000'],
  ])('names %s by its hosts only: %s', (uri, address) => {
    expect(databaseAddress(uri)).toBe(address);
  });
});
