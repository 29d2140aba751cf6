// The board-tree helpers of js/tree.js against RULES.md's addressing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addressOf, closedBy, describe, flatIndex, key, markAt, newSquare, parseKey, squaresShown, viewFor, within,
} from '../../js/tree.js';

test('the flat index is a1·9^(d-1) + … + ad, and addressOf inverts it', () => {
  assert.equal(flatIndex([4]), 4);
  assert.equal(flatIndex([0, 4]), 4);
  assert.equal(flatIndex([4, 0]), 36);
  assert.equal(flatIndex([8, 8]), 80);
  assert.equal(flatIndex([1, 2, 3]), 81 + 18 + 3);
  assert.equal(flatIndex([8, 8, 8, 8]), 6560);
  for (const depth of [1, 2, 3, 4]) {
    for (const index of [0, 1, 8, 9 ** depth - 1, Math.floor(9 ** depth / 2)]) {
      assert.equal(flatIndex(addressOf(index, depth)), index);
      assert.equal(addressOf(index, depth).length, depth);
    }
  }
});

test('keys join coordinates with dots; the root is ""', () => {
  assert.equal(key([]), '');
  assert.equal(key([4, 2]), '4.2');
  assert.deepEqual(parseKey(''), []);
  assert.deepEqual(parseKey('4.2.7'), [4, 2, 7]);
});

test('marks are read from the cells string by flat index', () => {
  const cells = '.'.repeat(36) + 'x' + '.'.repeat(43) + 'o';
  assert.equal(markAt(cells, [4, 0]), 'x');
  assert.equal(markAt(cells, [8, 8]), 'o');
  assert.equal(markAt(cells, [0, 0]), '');
});

test('within tells whether an address lies in a board', () => {
  assert.ok(within([4, 2, 7], []));
  assert.ok(within([4, 2, 7], [4, 2]));
  assert.ok(within([4, 2], [4, 2]));
  assert.ok(!within([4, 2], [4, 2, 7]));
  assert.ok(!within([3, 2, 7], [4]));
});

test('closedBy finds the decided board nearest the root', () => {
  const boards = { 4: 'x', '4.2': 'o' };
  assert.deepEqual(closedBy(boards, [4, 2, 7]), { address: [4], outcome: 'x' });
  assert.equal(closedBy(boards, [3, 2]), null);
  assert.deepEqual(closedBy({ '': 'draw' }, [0]), { address: [], outcome: 'draw' });
});

test('the view shows the target as squares when it is low enough, else the target itself', () => {
  assert.deepEqual(viewFor([4], 2), []);
  assert.deepEqual(viewFor([], 2), []);
  assert.deepEqual(viewFor([], 1), []);
  assert.deepEqual(viewFor([4, 2], 3), [4]);
  assert.deepEqual(viewFor([4], 3), [4]);
  assert.deepEqual(viewFor([], 3), []);
  assert.deepEqual(viewFor([4, 2, 7], 4), [4, 2]);
  assert.deepEqual(viewFor([4], 4), [4]);
  assert.ok(squaresShown([], 2));
  assert.ok(!squaresShown([], 3));
  assert.ok(squaresShown([4], 3));
  assert.ok(!squaresShown([4], 4));
});

test('newSquare finds the move between two states', () => {
  const before = '.'.repeat(81);
  const after = `${'.'.repeat(40)}x${'.'.repeat(40)}`;
  assert.deepEqual(newSquare(before, after, 2), [4, 4]);
  assert.equal(newSquare(before, before, 2), null);
});

test('addresses read as positions', () => {
  assert.equal(describe([]), 'the whole board');
  assert.equal(describe([4, 2]), '4.2 (centre, top-right)');
});
