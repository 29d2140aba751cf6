// The rating chart's layout (js/chart.js): line, deviation band, provisional spans.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chartGeometry, PROVISIONAL_ABOVE } from '../../js/chart.js';

const DAY = 86_400_000;

test('no games, no chart', () => {
  assert.equal(chartGeometry([]), null);
});

test('the line visits every point left to right, higher ratings higher up', () => {
  const g = chartGeometry([
    { t: 0, rating: 1500, deviation: 300 },
    { t: DAY, rating: 1600, deviation: 200 },
    { t: 3 * DAY, rating: 1550, deviation: 150 },
  ], { width: 600, height: 220, pad: 36 });
  assert.equal(g.dots.length, 3);
  assert.deepEqual(g.dots.map(([x]) => x), [36, 212, 564]);
  assert.ok(g.dots[1][1] < g.dots[0][1], 'a higher rating is drawn higher');
  assert.match(g.line, /^M36 [\d.]+ L212 [\d.]+ L564 [\d.]+$/);
  assert.ok(g.band.endsWith('Z'));
  // Every tick lies inside the box and the band's extremes are covered.
  assert.ok(g.ticks[0].rating <= 1500 - 300 && g.ticks.at(-1).rating >= 1600 + 200);
});

test('the provisional spans follow the deviation across 110, interpolated', () => {
  const pts = [
    { t: 0, rating: 1500, deviation: 350 },
    { t: 10 * DAY, rating: 1500, deviation: 90 },
    { t: 20 * DAY, rating: 1500, deviation: 130 },
  ];
  const g = chartGeometry(pts, { width: 1000, height: 200, pad: 0 });
  assert.equal(g.provisional.length, 2);
  // 350 → 90 crosses 110 at 240/260 of the way; 90 → 130 at half way.
  assert.equal(g.provisional[0].x, 0);
  assert.equal(g.provisional[0].width, Math.round((240 / 260) * 500 * 10) / 10);
  assert.equal(g.provisional[1].x, 750);
  assert.equal(g.provisional[1].width, 250);
  const settled = chartGeometry(pts.map((p) => ({ ...p, deviation: PROVISIONAL_ABOVE })));
  assert.deepEqual(settled.provisional, []);
});
