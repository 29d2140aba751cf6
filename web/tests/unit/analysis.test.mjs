// The analysis panel's pure parts (js/analysis.js): replaying moves into
// cells, deciding boards as RULES.md does, and the winning-chance graph.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { graphGeometry } from '../../js/chart.js';
import { boardsOf, positionAt } from '../../js/tree.js';

test('moves replay into cells, X first', () => {
  assert.equal(positionAt([[0], [4], [8]], 2, 1), 'x...o....');
  assert.equal(positionAt([[0], [4], [8]], 3, 1), 'x...o...x');
  assert.equal(positionAt([[4, 0], [0, 4]], 2, 2).indexOf('x'), 36);
  assert.equal(positionAt([[4, 0], [0, 4]], 2, 2).indexOf('o'), 4);
});

test('a line wins a board, a full board without one is drawn, an open one is absent', () => {
  assert.deepEqual(boardsOf('xxxoo....', 1), { '': 'x' });
  assert.deepEqual(boardsOf('xoxxoooxx', 1), { '': 'draw' });
  assert.deepEqual(boardsOf('x...o....', 1), {});
  // Depth 2: X takes board 0; three won boards in a row win the root.
  const cells = new Array(81).fill('.');
  for (const b of [0, 1, 2]) for (const c of [0, 1, 2]) cells[b * 9 + c] = 'x';
  cells[40] = 'o';
  const boards = boardsOf(cells.join(''), 2);
  assert.deepEqual(boards, { 0: 'x', 1: 'x', 2: 'x', '': 'x' });
});

test('a drawn child counts as decided but for nobody', () => {
  const cells = new Array(81).fill('.');
  'xoxxoooxx'.split('').forEach((c, i) => { cells[i] = c; });
  assert.deepEqual(boardsOf(cells.join(''), 2), { 0: 'draw' });
});

test('the graph has a point before each move and one after the last, X on top', () => {
  const plies = [
    { ply: 0, seat: 'x', win_x: 0.5, best_win: 0.5, loss: 0, judgement: 'best' },
    { ply: 1, seat: 'o', win_x: 0.6, best_win: 0.4, loss: 0.4, judgement: 'blunder' },
  ];
  const g = graphGeometry(plies, { width: 100, height: 100, pad: 0 });
  assert.equal(g.dots.length, 3);
  assert.deepEqual(g.dots.map(([x]) => x), [0, 50, 100]);
  assert.equal(g.dots[0][1], 50);
  // After O's blunder O's chance is 0: X's is 1, at the top.
  assert.equal(g.dots[2][1], 0);
  assert.ok(g.line.startsWith('M0 50 L50 40'));
  assert.equal(graphGeometry([]), null);
});
