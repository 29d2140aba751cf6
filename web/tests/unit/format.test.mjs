// The tournament figures of js/dom.js: scores with halves, and ranks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ordinal, scoreText } from '../../js/dom.js';

test('scores show halves as ½', () => {
  assert.equal(scoreText(0), '0');
  assert.equal(scoreText(0.5), '½');
  assert.equal(scoreText(1), '1');
  assert.equal(scoreText(2.5), '2½');
  assert.equal(scoreText(12), '12');
  // Sums of halves in floating point stay exact enough.
  assert.equal(scoreText(0.1 + 0.2 + 0.2), '½');
});

test('ranks read 1st, 2nd, 3rd, 4th, 11th to 13th, 21st, 112th', () => {
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 112].map(ordinal),
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '112th']);
});
