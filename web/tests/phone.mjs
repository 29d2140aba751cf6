// A phone-sized screen (390×844, touch): the lobby and the match fit the
// width without scrolling sideways, the 9×9 board fills it, and squares are
// played by tapping.

import { join } from 'node:path';
import { assert, fitsTheWidth, open, playMove, run, screen, SHOTS, signUp, startPractice, step, uniqueName, waitForTurn } from './lib.mjs';

const WIDTH = 390;

await run('phone', async (browser) => {
  const page = await open(browser, {
    viewport: { width: WIDTH, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  });
  await step('the log-in screen fits the width', () => fitsTheWidth(page));
  await step('sign up', () => signUp(page, uniqueName('phone')));
  await step('the lobby fits the width', async () => {
    await fitsTheWidth(page);
    await page.screenshot({ path: join(SHOTS, 'phone-lobby.png'), fullPage: true });
  });
  await step('start a practice match with 30 seconds a turn', () => startPractice(page, { depth: 2, level: 1, time: 'turn-30' }));

  await step('the board fills the width, squares are big enough to tap', async () => {
    await waitForTurn(page);
    await fitsTheWidth(page);
    const board = await page.locator('.board-frame').boundingBox();
    assert.ok(board.width >= WIDTH - 40 && board.width <= WIDTH, `board width ${board.width}`);
    const cell = await page.locator('button.cell[data-address="0.0"]').boundingBox();
    assert.ok(cell.width >= 34, `square width ${cell.width}`);
    const seats = await page.locator('.seats').boundingBox();
    assert.ok(seats.y < board.y, 'the seats and clocks are above the board');
  });

  await step('tap squares to play four moves', async () => {
    for (let i = 0; i < 4; i += 1) {
      const s = await waitForTurn(page);
      if (s.status === 'finished') break;
      const address = s.enabled[Math.floor(Math.random() * s.enabled.length)];
      await page.locator(`button.cell[data-address="${address}"]`).tap();
      await page.waitForFunction((ply) => Number(document.querySelector('section.match').dataset.ply) > ply, s.ply);
    }
    const after = await screen(page);
    assert.ok(after.ply >= 7 || after.status === 'finished', `ply ${after.ply}`);
  });

  await step('per-turn clock: my turn counts down from 30 s', async () => {
    await waitForTurn(page);
    const text = await page.locator('.clock[data-clock="x"]').textContent();
    assert.match(text, /^0:(30|2\d)$/);
    await fitsTheWidth(page);
    await page.screenshot({ path: join(SHOTS, 'phone.png') });
  });

  await step('one more move by click still works after scrolling', async () => {
    await page.locator('.side').scrollIntoViewIfNeeded();
    await playMove(page);
  });
  page.check();
});
