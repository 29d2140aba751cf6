// A depth-3 practice match: the whole board shows its nine sub-boards as
// tiles, browsing into one shows its squares, breadcrumbs lead back; the view
// follows the board the player must play in; resigning ends the match.

import { join } from 'node:path';
import {
  apiAs, assert, open, playMove, run, screen, SHOTS, signUp, startPractice, step, uniqueName, waitForTurn,
} from './lib.mjs';

await run('depth3', async (browser) => {
  const page = await open(browser);
  await step('sign up', () => signUp(page, uniqueName('deep')));
  const id = await step('start a depth-3 practice match against CPU level 1',
    () => startPractice(page, { depth: 3, level: 1, time: 'clock-5-3' }));

  await step('the first move may go anywhere: the whole board shows nine sub-boards to browse into', async () => {
    const s = await waitForTurn(page);
    assert.equal(s.view, '');
    assert.equal(s.cells, 0, 'no square is playable from the whole board');
    assert.deepEqual(s.tiles, ['0', '1', '2', '3', '4', '5', '6', '7', '8']);
    assert.equal(s.legalTiles.length, 9);
    assert.equal(await page.locator('.board-frame span.cell').count(), 729, 'every square is drawn');
    assert.equal(await page.locator('.breadcrumbs [aria-current]').textContent(), 'Whole board');
  });

  await step('browse into sub-board 4 and back with the breadcrumbs', async () => {
    await page.getByRole('button', { name: /^Browse into board 4 \(centre\)/ }).click();
    let s = await screen(page);
    assert.equal(s.view, '4');
    assert.equal(s.cells, 81);
    assert.ok(s.enabled.every((a) => a.startsWith('4.')) && s.enabled.length === 81);
    assert.equal(await page.locator('.breadcrumbs [aria-current]').textContent(), '4 · centre');
    await page.locator('.breadcrumbs').getByRole('button', { name: 'Whole board' }).click();
    s = await screen(page);
    assert.equal(s.view, '');
    assert.equal(s.tiles.length, 9);
    await page.getByRole('button', { name: /^Browse into board 4 \(centre\)/ }).click();
  });

  await step('play 4.0.0: the CPU is sent to board 0.0, and I follow to where I must play', async () => {
    const s = await playMove(page, () => '4.0.0');
    assert.equal(s.played, '4.0.0');
    const after = await waitForTurn(page);
    const state = await apiAs(page, 'GET', `/matches/${id}`);
    assert.equal(after.ply, 2);
    const target = state.next.board;
    assert.equal(target.length, 2, 'the target is a board of squares');
    assert.equal(after.view, String(target[0]), 'the view is the sub-board holding the target');
    assert.deepEqual(after.target, [target.join('.')]);
    assert.deepEqual([...after.enabled].sort(), state.next.legal.map((a) => a.join('.')).sort());
  });

  await step('play five more moves by clicking', async () => {
    for (let i = 0; i < 5; i += 1) await playMove(page);
  });

  await step('screenshot of the depth-3 match, and of the whole board', async () => {
    const now = await waitForTurn(page);
    await page.screenshot({ path: join(SHOTS, 'depth3.png') });
    if (now.status === 'finished' || now.view === '') return; // rare: sent to the whole board
    await page.locator('.breadcrumbs').getByRole('button', { name: 'Whole board' }).click();
    await page.screenshot({ path: join(SHOTS, 'depth3-whole.png') });
    const s = await screen(page);
    assert.equal(s.view, '');
    assert.ok(s.legalTiles.length >= 1, 'the sub-board to play in is highlighted');
    assert.ok(await page.locator('button.go-target').isVisible(), 'a button leads back to the board to play in');
    await page.locator('button.go-target').click();
    assert.ok((await screen(page)).enabled.length > 0);
  });

  await step('resign: the match ends and the result says so', async () => {
    await page.getByRole('button', { name: 'Resign' }).click();
    await page.getByRole('button', { name: 'Yes, resign' }).click();
    await page.locator('.result').waitFor();
    assert.match(await page.locator('.result').textContent(), /You lost.*by resignation/);
    assert.equal((await screen(page)).status, 'finished');
  });
  page.check();
});
