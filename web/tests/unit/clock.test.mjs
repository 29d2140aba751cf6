// The clocks of js/clock.js: ticking from the server's figures, whatever the local clock says.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Clocks, format } from '../../js/clock.js';

const at = (ms) => new Date(ms).toISOString();

test('format shows m:ss, h:mm:ss, tenths under ten seconds, and ∞ without a limit', () => {
  assert.equal(format(600_000), '10:00');
  assert.equal(format(59_999), '0:59');
  assert.equal(format(10_000), '0:10');
  assert.equal(format(9_950), '0:09.9');
  assert.equal(format(0), '0:00.0');
  assert.equal(format(-5), '0:00.0');
  assert.equal(format(3_723_000), '1:02:03');
  assert.equal(format(null), '∞');
});

test('the running clock counts down from server_time; the other stands still', () => {
  const c = new Clocks();
  const server = 1_000_000;
  c.update({ x_ms: 60_000, o_ms: 30_000, running: 'x', server_time: at(server) }, server);
  assert.equal(c.left('x', server + 1500), 58_500);
  assert.equal(c.left('o', server + 1500), 30_000);
  assert.equal(c.left('x', server + 120_000), 0);
});

test('a skewed local clock does not change the figures', () => {
  const c = new Clocks();
  const server = 1_000_000;
  const skew = -7_000_000; // the local clock is two hours behind
  c.update({ x_ms: 60_000, o_ms: 60_000, running: 'o', server_time: at(server) }, server + skew);
  assert.equal(c.left('o', server + skew + 2000), 58_000);
});

test('the least delayed state sets the offset', () => {
  const c = new Clocks();
  c.update({ x_ms: 10_000, o_ms: 10_000, running: 'x', server_time: at(1000) }, 1300); // 300 ms late
  c.update({ x_ms: 9_000, o_ms: 10_000, running: 'x', server_time: at(2000) }, 2050); // 50 ms late
  assert.equal(c.serverNow(3000), 2950);
  assert.equal(c.left('x', 3000), 8050);
});

test('no limit: null for both seats', () => {
  const c = new Clocks();
  c.update({ x_ms: null, o_ms: null, running: null, server_time: at(0) }, 0);
  assert.equal(c.left('x'), null);
  assert.equal(c.left('o'), null);
});
