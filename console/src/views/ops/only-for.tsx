import type { ReactNode } from 'react';
import { useApi } from '../../api';
import type { KeyKind } from '../registry';

/**
 * A route without a navigation entry (a detail view) shown only to the kinds of key whose calls it
 * makes; any other key gets what an unknown route gets.
 */
export function OnlyFor(props: { kinds: readonly KeyKind[]; children: ReactNode }) {
  const { me } = useApi();
  if (props.kinds.includes(me.kind)) return <>{props.children}</>;
  return (
    <section>
      <h1>Not found</h1>
      <p>This console has no such view for this key.</p>
    </section>
  );
}
