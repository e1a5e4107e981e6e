import { Schema, SchemaFactory } from '@nestjs/mongoose';
import {
  namespaceFilter,
  namespaceKey,
  namespaceOf,
  NamespacedDocument,
  parseNamespaceKey,
  tenantFilter,
  type Namespace,
} from './namespace';

@Schema({ collection: 'things' })
class ThingDocument extends NamespacedDocument {}
const ThingSchema = SchemaFactory.createForClass(ThingDocument);

describe('Namespace', () => {
  const ns: Namespace = { kind: 'team', id: 'T1', branch: 'staging' };

  it('declares the three stored fields once for every schema that extends the fragment', () => {
    expect(Object.keys(ThingSchema.paths).sort()).toEqual(
      ['_id', 'branch', 'tenant', 'tenantKind'].sort(),
    );
    expect(ThingSchema.path('tenantKind').options).toMatchObject({ required: true });
  });

  it('turns into its filter and back', () => {
    expect(namespaceFilter(ns)).toEqual({ tenantKind: 'team', tenant: 'T1', branch: 'staging' });
    expect(namespaceOf(namespaceFilter(ns))).toEqual(ns);
    expect(tenantFilter(ns)).toEqual({ tenantKind: 'team', tenant: 'T1' });
  });

  it('keys a map without mixing a user and a team of one id', () => {
    expect(parseNamespaceKey(namespaceKey(ns))).toEqual(ns);
    expect(namespaceKey({ ...ns, kind: 'user' })).not.toBe(namespaceKey(ns));
  });
});
