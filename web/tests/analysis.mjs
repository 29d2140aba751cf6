// A finished practice match is analysed: the "Analyse" button queues it,
// the progress shows, then the winning-chance graph, the moves with their
// judgements and the accuracies; stepping through the game moves the board
// and marks the CPU's best move.

import { join } from 'node:path';
import {
  apiAs, assert, open, playToTheEnd, run, SHOTS, signUp, startPractice, step, uniqueName,
} from './lib.mjs';

const JUDGEMENTS = ['best', 'good', 'inaccuracy', 'mistake', 'blunder'];

await run('analysis', async (browser) => {
  const page = await open(browser);
  await step('sign up', () => signUp(page, uniqueName('analyst')));
  const id = await step('play tic-tac-toe against CPU level 1 to the end',
    async () => {
      const matchId = await startPractice(page, { depth: 1, level: 1 });
      await playToTheEnd(page);
      return matchId;
    });
  const panel = page.locator('section.analysis');

  await step('under the finished match, an "Analyse" button; nothing analysed yet', async () => {
    await panel.getByRole('button', { name: 'Analyse' }).waitFor();
    assert.equal(await panel.getAttribute('data-analysis'), 'none');
  });

  const analysis = await step('"Analyse" queues it; the panel follows it until it is done', async () => {
    await panel.getByRole('button', { name: 'Analyse' }).click();
    await page.locator('section.analysis[data-analysis="done"]').waitFor({ timeout: 60_000 });
    return apiAs(page, 'GET', `/matches/${id}/analysis`);
  });

  await step('the graph has a point per move and one after the last; the list judges every move', async () => {
    const state = await apiAs(page, 'GET', `/matches/${id}`);
    assert.equal(analysis.status, 'done');
    assert.equal(analysis.plies.length, state.ply);
    assert.equal(await panel.locator('svg.analysis-graph circle.graph-dot').count(), state.ply + 1);
    const items = panel.locator('.analysis-moves li');
    assert.equal(await items.count(), state.ply);
    for (let i = 0; i < state.ply; i += 1) {
      const judgement = await items.nth(i).getAttribute('data-judgement');
      assert.ok(JUDGEMENTS.includes(judgement), judgement);
      assert.equal(judgement, analysis.plies[i].judgement);
    }
    for (const side of ['x', 'o']) {
      const shown = Number(await panel.locator(`[data-accuracy="${side}"]`).textContent());
      assert.ok(shown >= 0 && shown <= 100, `accuracy ${side}: ${shown}`);
      assert.equal(shown, analysis.accuracy[side]);
    }
    await page.screenshot({ path: join(SHOTS, 'analysis.png'), fullPage: true });
  });

  await step('stepping through the game moves the board and marks the best move', async () => {
    const board = panel.locator('.analysis-board');
    assert.equal(await board.getAttribute('data-step'), '0');
    assert.equal(await board.locator('.cell.mark-x, .cell.mark-o').count(), 0);
    const best = analysis.plies[0].best.join('.');
    assert.equal(await board.locator(`.cell.best[data-address="${best}"]`).count(), 1);
    await panel.getByRole('button', { name: 'Next move' }).click();
    assert.equal(await board.getAttribute('data-step'), '1');
    const played = analysis.plies[0].address.join('.');
    assert.equal(await board.locator(`.cell.mark-x[data-address="${played}"]`).count(), 1);
    assert.equal(await board.locator('.cell.best').count(), 1);
    await panel.getByRole('button', { name: 'End' }).click();
    assert.equal(await board.getAttribute('data-step'), String(analysis.plies.length));
    assert.equal(await board.locator('.cell.best').count(), 0, 'no best move after the last one');
    assert.equal(await board.locator('.cell.mark-x, .cell.mark-o').count(), analysis.plies.length);
    await panel.locator('.analysis-moves li').first().getByRole('button').click();
    assert.equal(await board.getAttribute('data-step'), '0');
  });

  await step('after a reload the analysis shows at once; asking again answers it as it is', async () => {
    await page.reload();
    await page.locator('section.analysis[data-analysis="done"]').waitFor();
    const again = await apiAs(page, 'POST', `/matches/${id}/analysis`);
    assert.deepEqual(again, analysis);
  });

  page.check();
});
