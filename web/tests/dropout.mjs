// Dropping out and coming back (the server here has a 3-second grace
// period): the other player sees the dropped seat go away and the CPU play
// it, live; the player who left logs in again and is back in their seat.

import { join } from 'node:path';
import { assert, logIn, open, run, screen, SHOTS, signUp, step, uniqueName } from './lib.mjs';

async function waitPly(page, ply) {
  await page.waitForFunction((n) => Number(document.querySelector('section.match')?.dataset.ply) >= n, ply);
}

await run('dropout', async (browser) => {
  const host = await open(browser);
  let guest = await open(browser);
  const guestName = uniqueName('away');
  await step('two players sign up; the host opens a room and the guest joins', async () => {
    await signUp(host, uniqueName('stay'));
    await signUp(guest, guestName);
    const form = host.getByRole('form', { name: 'Open a room' });
    await form.getByLabel('Time control').selectOption('none');
    await form.getByRole('button', { name: 'Open a room' }).click();
    await host.waitForURL(/#\/room\//);
    const code = await host.locator('.room-code').textContent();
    await guest.getByLabel('Room code').fill(code);
    await guest.getByRole('button', { name: 'Join' }).click();
    await host.locator('section.match[data-my-seat="x"]').waitFor();
    await guest.locator('section.match[data-my-seat="o"]').waitFor();
  });
  const url = guest.url();

  await step('X moves, O closes the page: X sees O away and the CPU playing for them', async () => {
    const sent = [];
    host.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/moves')) sent.push(JSON.parse(r.postData()));
    });
    await host.locator('button.cell[data-address="4.4"]').click();
    await waitPly(host, 1);
    assert.equal(sent.length, 1);
    assert.ok(Number.isInteger(sent[0].lag_ms) && sent[0].lag_ms >= 0, `the move reports its lag: ${JSON.stringify(sent[0])}`);
    await waitPly(guest, 1);
    await guest.context().close();
    await host.locator('.seat-o[data-controller="cpu"]').waitFor({ timeout: 15_000 });
    assert.match(await host.locator('.seat-o .controller').textContent(), /CPU playing for them/);
    assert.equal(await host.locator('.seat-o .presence').textContent(), 'away');
    await waitPly(host, 2);
    assert.equal((await screen(host)).turn, 'x', 'the CPU moved for O');
    await host.screenshot({ path: join(SHOTS, 'dropout.png') });
  });

  await step('O logs in again from a new browser and is back in the seat; X sees it live', async () => {
    guest = await open(browser);
    await logIn(guest, guestName);
    await guest.waitForURL(url);
    await guest.locator('section.match[data-my-seat="o"]').waitFor();
    await host.locator('.seat-o[data-controller="human"][data-connected="true"]').waitFor({ timeout: 10_000 });
    const s = await screen(host);
    await host.locator(`button.cell[data-address="${s.enabled[0]}"]`).click();
    await guest.waitForFunction(() => document.querySelector('section.match').dataset.turn === 'o');
    assert.ok((await screen(guest)).enabled.length > 0, 'O plays again');
  });
  host.check();
  guest.check();
});
