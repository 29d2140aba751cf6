// Sign up, practise against the CPU (level 1) on the classic board with a
// clock, check what the screen shows against the API, reload, log out and in
// again (back in the match), play by clicking until the match ends.

import { join } from 'node:path';
import {
  apiAs, assert, logIn, open, playMove, playToTheEnd, run, screen, SHOTS, signUp, startPractice,
  step, uniqueName, waitForTurn,
} from './lib.mjs';

await run('practice', async (browser) => {
  const page = await open(browser);
  const name = uniqueName('web');

  await step('the page asks a newcomer to log in', async () => {
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
  });
  await step('sign up', () => signUp(page, name));

  const id = await step('start a practice match against CPU level 1 with a 10-minute clock',
    () => startPractice(page, { depth: 2, level: 1, time: 'clock-10' }));

  await step('the 9×9 board shows every square as a labelled button, all legal at the start', async () => {
    const s = await waitForTurn(page);
    assert.equal(s.cells, 81);
    assert.equal(s.enabled.length, 81);
    assert.equal(s.mySeat, 'x');
    const label = await page.locator('button.cell[data-address="4.4"]').getAttribute('aria-label');
    assert.match(label, /^Square 4\.4: empty/);
    assert.equal(await page.locator('.seat-o .controller').textContent(), 'CPU');
    assert.equal(await page.locator('.seat-x .presence').textContent(), 'online');
  });

  await step('my clock ticks locally while it is my turn', async () => {
    const clock = page.locator('.clock[data-clock="x"]');
    const first = await clock.textContent();
    await page.waitForTimeout(1300);
    const second = await clock.textContent();
    assert.notEqual(first, second, 'the running clock changes');
    assert.equal(await page.locator('.clock[data-clock="o"]').textContent(), '10:00');
  });

  await step('play three moves; the CPU answers each, and only the legal squares are enabled', async () => {
    for (let i = 0; i < 3; i += 1) {
      await playMove(page);
      const s = await waitForTurn(page);
      if (s.status === 'finished') break;
      const state = await apiAs(page, 'GET', `/matches/${id}`);
      assert.equal(state.ply, s.ply);
      assert.deepEqual([...s.enabled].sort(), state.next.legal.map((a) => a.join('.')).sort());
      assert.deepEqual(s.target, [state.next.board.join('.')]);
    }
    const moves = await page.locator('.move-list li').count();
    assert.ok(moves >= 6, `the move list shows the moves (${moves})`);
  });

  await step('screenshot of the match in progress', async () => {
    await page.screenshot({ path: join(SHOTS, 'match.png') });
  });

  const before = await screen(page);
  await step('after a reload I am back in my seat', async () => {
    await page.reload();
    await page.locator('section.match[data-status]').waitFor();
    const s = await waitForTurn(page);
    assert.equal(s.mySeat, 'x');
    assert.equal(s.ply, before.ply);
    assert.ok(s.enabled.length > 0);
  });

  await step('log out, reload, log in again: I land back in the match', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.goto(`${page.url().split('#')[0]}#/`);
    await page.reload();
    await logIn(page, name);
    await page.waitForURL(new RegExp(`#/match/${id}$`));
    const s = await waitForTurn(page);
    assert.equal(s.mySeat, 'x');
  });

  await step('play by clicking until the match ends', async () => {
    const n = await playToTheEnd(page);
    assert.ok(n > 0);
    const result = page.locator('.result');
    await result.waitFor();
    assert.match(await result.textContent(), /You won|You lost|Draw/);
    assert.equal((await screen(page)).enabled.length, 0);
    await page.screenshot({ path: join(SHOTS, 'match-finished.png') });
  });

  await step('the profile lists a rating per ladder; the leaderboards load', async () => {
    await page.getByRole('link', { name: `Your profile (${name})` }).click();
    await page.locator('table.ratings tbody tr').first().waitFor();
    assert.equal(await page.locator('table.ratings tbody tr').count(), 3);
    await page.locator('.history li').first().waitFor();
    await page.getByRole('link', { name: 'Leaderboards' }).click();
    await page.locator('.ladders .card').first().waitFor();
    assert.equal(await page.locator('.ladders .card').count(), 3);
  });

  page.check();
});
