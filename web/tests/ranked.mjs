// Ranked play: a player queues on a ladder and sees the ticket's status,
// rating window, wait time and queue size; a second player queues and both
// are paired (told by /me/events) into the same rated match; a resignation
// shows both rating changes; the profile charts the rating's history.

import { join } from 'node:path';
import { assert, open, run, screen, SHOTS, signUp, step, uniqueName } from './lib.mjs';

async function queue(page, ladder) {
  const form = page.getByRole('form', { name: 'Queue for a ranked match' });
  await form.getByLabel('Ladder').selectOption(ladder);
  await form.getByRole('button', { name: 'Find an opponent' }).click();
}

await run('ranked', async (browser) => {
  const first = await open(browser);
  const second = await open(browser);
  const a = uniqueName('ann');
  const b = uniqueName('bob');
  await step('two players sign up', async () => {
    await signUp(first, a);
    await signUp(second, b);
  });

  await step('the first queues alone: status, window, wait time and queue size show', async () => {
    await queue(first, 'ultimate-10m');
    await first.waitForURL(/#\/queue\//);
    await first.locator('.ticket-status[data-status="queued"]').waitFor();
    await first.locator('.ticket-size', { hasText: '1' }).waitFor();
    assert.match(await first.locator('.ticket-window').textContent(), /^± \d+$|anyone/);
    await first.waitForTimeout(1100);
    assert.match(await first.locator('.ticket-waited').textContent(), /^[1-9]\d* s$/);
    await first.screenshot({ path: join(SHOTS, 'queue.png') });
  });

  await step('the second queues: both are paired into the same rated match', async () => {
    await queue(second, 'ultimate-10m');
    await second.waitForURL(/#\/match\//, { timeout: 15_000 });
    await first.waitForURL(/#\/match\//, { timeout: 15_000 });
    assert.equal(new URL(first.url()).hash, new URL(second.url()).hash);
    for (const p of [first, second]) await p.locator('section.match[data-my-seat]:not([data-my-seat=""])').waitFor();
    const seats = [(await screen(first)).mySeat, (await screen(second)).mySeat].sort();
    assert.deepEqual(seats, ['o', 'x']);
    assert.match(await first.locator('.match-meta').textContent(), /rated · ultimate-10m/);
  });

  await step('X plays a move; O resigns; both see the rating changes', async () => {
    const [x, o] = (await screen(first)).mySeat === 'x' ? [first, second] : [second, first];
    const s = await screen(x);
    await x.locator(`button.cell[data-address="${s.enabled[0]}"]`).click();
    await o.waitForFunction(() => document.querySelector('section.match').dataset.ply === '1');
    await o.getByRole('button', { name: 'Resign' }).click();
    await o.getByRole('button', { name: 'Yes, resign' }).click();
    for (const p of [x, o]) {
      await p.locator('.result .rating-change').first().waitFor();
      assert.equal(await p.locator('.result .rating-change').count(), 2);
    }
    assert.match(await x.locator('.result').textContent(), /You won/);
    await x.getByRole('button', { name: 'Queue again' }).waitFor();
  });

  await step('the leaderboard ranks established players only: after one game both are provisional', async () => {
    await first.goto(`${first.url().split('#')[0]}#/ladders/ultimate-10m`);
    await first.locator('table.leaderboard tbody tr', { hasText: 'No established player yet' }).waitFor();
    assert.equal(await first.locator('table.leaderboard tbody tr', { hasText: a }).count(), 0);
  });
  await step('the profile draws the rating history, the provisional span shaded', async () => {
    await first.getByRole('link', { name: `Your profile (${a})` }).click();
    const chart = first.locator('figure.rating-chart[data-ladder="ultimate-10m"] svg');
    await chart.waitFor();
    assert.equal(await chart.locator('circle.game').count(), 1);
    assert.match(await chart.locator('path.rating-line').getAttribute('d'), /^M[\d.]+ [\d.]+/);
    // One game from 1500 ± 350 leaves the deviation above 110: all provisional.
    assert.equal(await chart.locator('rect.provisional-band').count(), 1);
    await first.screenshot({ path: join(SHOTS, 'rating-chart.png') });
  });
  first.check();
  second.check();
});
