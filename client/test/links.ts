// The Link header as the service writes it (src/common/pagination/keyset.ts) and as RFC 8288
// allows it otherwise: the targets by relation type, and the cursors a list call takes.
import assert from 'node:assert/strict';
import { pageCursors, parseLink } from '../src';

const withLink = (link?: string): Response =>
  new Response(null, link === undefined ? {} : { headers: { Link: link } });

/** parseLink: targets by relation type, quoted or not, several types, other parameters. */
export function linksByRelation(): void {
  assert.deepEqual([...parseLink(undefined)], []);
  assert.deepEqual([...parseLink('')], []);
  assert.deepEqual([...parseLink('not a link')], []);
  assert.deepEqual([...parseLink('</a>')], [], 'a link without rel names no relation');
  assert.deepEqual(
    [...parseLink('</files?limit=2&after%5Bid%5D=f2>; rel="next"')],
    [['next', '/files?limit=2&after%5Bid%5D=f2']],
  );
  const links = parseLink(
    '<https://x.example/p?a=1,2>; title="page, two"; REL=Next, </b>;rel=prev, </c>; rel="last next"',
  );
  assert.equal(links.get('next'), 'https://x.example/p?a=1,2', 'the first link of a type wins');
  assert.equal(links.get('prev'), '/b');
  assert.equal(links.get('last'), '/c');
  assert.equal(links.size, 3);
}

/** pageCursors: next is the after[…] cursor of rel="next", prev the before[…] one of rel="prev". */
export function cursorsOfLinks(): void {
  assert.deepEqual(pageCursors(withLink()), {});
  assert.deepEqual(
    pageCursors(withLink('</files?limit=2&after%5Bid%5D=665f1c2a9b1e8a0012345678>; rel="next"')),
    { next: { id: '665f1c2a9b1e8a0012345678' } },
  );
  // An items page walked backwards: the service links the page before it.
  assert.deepEqual(
    pageCursors(
      withLink(
        '</data/orders?sort=total&filter%5Bstatus%5D%5Beq%5D=open&before%5Btotal%5D=5&before%5B_id%5D=i9>; rel="prev"',
      ),
    ),
    { prev: { total: '5', _id: 'i9' } },
  );
  assert.deepEqual(
    pageCursors(
      withLink(
        '</p?after%5Bname%5D=A%2C%20b&after%5Bid%5D=1>; rel="next", </p?before%5Bname%5D=Z&before%5Bid%5D=2>; rel="prev"',
      ),
    ),
    { next: { name: 'A, b', id: '1' }, prev: { name: 'Z', id: '2' } },
  );
  // A link without the cursor of its side is no cursor; filters are not cursors.
  assert.deepEqual(pageCursors(withLink('</p?before%5Bid%5D=1&filter%5Bid%5D=2>; rel="next"')), {});
  assert.deepEqual(pageCursors(withLink('</p?after%5B%5D=1>; rel="next"')), {});
  assert.deepEqual(pageCursors(withLink('<http://[bad>; rel="next"')), {});
  const odd = pageCursors(withLink('</p?after%5B__proto__%5D=x>; rel="next"')).next;
  assert.deepEqual(Object.entries(odd ?? {}), [['__proto__', 'x']]);
}
