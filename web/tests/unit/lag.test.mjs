// The lag meter of js/lag.js: the round trip each move reports as `lag_ms`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LagMeter, MAX_LAG_MS } from '../../js/lag.js';

test('nothing is reported before a request was timed', () => {
  assert.equal(new LagMeter().lagMs(), undefined);
});

test('the first sample is taken as it is, later ones are smoothed', () => {
  const m = new LagMeter();
  m.record(100);
  assert.equal(m.lagMs(), 100);
  m.record(300);
  assert.equal(m.lagMs(), 150);
  for (let i = 0; i < 40; i += 1) m.record(80);
  assert.equal(m.lagMs(), 80);
});

test('reports stay within what the server accepts', () => {
  const m = new LagMeter();
  m.record(-5);
  m.record(Number.NaN);
  assert.equal(m.lagMs(), undefined);
  m.record(10 * MAX_LAG_MS);
  assert.equal(m.lagMs(), MAX_LAG_MS);
});

test('timed requests are measured when they succeed', async () => {
  const m = new LagMeter();
  const answer = await m.timed(() => new Promise((resolve) => setTimeout(() => resolve('ok'), 30)));
  assert.equal(answer, 'ok');
  assert.ok(m.lagMs() >= 25, `${m.lagMs()}`);
  await assert.rejects(m.timed(() => Promise.reject(new Error('down'))));
  assert.ok(m.lagMs() >= 25);
});
