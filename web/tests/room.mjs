// Two players in two browsers: one opens a room, the other joins by its
// six-character code; each sees the other's moves, controller and presence
// live from the event stream; the game ends; a rematch swaps X and O.

import { join } from 'node:path';
import { assert, open, run, screen, SHOTS, signUp, step, uniqueName } from './lib.mjs';

/** Clicks `address` on `page` (its turn), and waits for `other` to show the move. */
async function play(page, other, address) {
  const before = (await screen(page)).ply;
  await page.locator(`button.cell[data-address="${address}"]:not([disabled])`).click();
  for (const p of [page, other]) {
    await p.waitForFunction((ply) => Number(document.querySelector('section.match').dataset.ply) > ply, before);
  }
}

await run('room', async (browser) => {
  const host = await open(browser);
  const guest = await open(browser);
  const hostName = uniqueName('host');
  const guestName = uniqueName('guest');
  await step('two players sign up', async () => {
    await signUp(host, hostName);
    await signUp(guest, guestName);
  });

  const code = await step('the host opens a tic-tac-toe room and sees its code', async () => {
    const form = host.getByRole('form', { name: 'Open a room' });
    await form.getByLabel('Board depth').selectOption('1');
    await form.getByLabel('Time control').selectOption('clock-3');
    await form.getByRole('button', { name: 'Open a room' }).click();
    await host.waitForURL(/#\/room\/[A-Z0-9]{6}$/);
    const shown = await host.locator('.room-code').textContent();
    assert.match(shown, /^[A-Z0-9]{6}$/);
    assert.match(await host.locator('.waiting').textContent(), /Share this code/);
    return shown;
  });

  await step('the guest joins by the code (typed in lower case); both land in the match', async () => {
    const form = guest.getByRole('form', { name: 'Join a room' });
    await form.getByLabel('Room code').fill(code.toLowerCase());
    await form.getByRole('button', { name: 'Join' }).click();
    await guest.waitForURL(/#\/match\//);
    await host.waitForURL(/#\/match\//);
    assert.equal(new URL(host.url()).hash, new URL(guest.url()).hash);
    await host.locator('section.match[data-my-seat="x"]').waitFor();
    await guest.locator('section.match[data-my-seat="o"]').waitFor();
    assert.equal(await guest.locator('.seat-x .controller').textContent(), 'human');
  });

  await step('moves show live on the other screen; only the side to move can click', async () => {
    assert.equal((await screen(guest)).enabled.length, 0, 'O cannot play on X\'s turn');
    await play(host, guest, '4');
    const g = await screen(guest);
    assert.equal(g.ply, 1);
    assert.equal(await guest.locator('button.cell[data-address="4"]').textContent(), 'X');
    assert.equal(await guest.locator('.move-list li').count(), 1);
    assert.equal(g.enabled.length, 8);
    await host.locator('.seat-o .presence', { hasText: 'online' }).waitFor();
    await play(guest, host, '0');
    await play(host, guest, '2');
    await play(guest, host, '6');
    await host.screenshot({ path: join(SHOTS, 'room.png') });
  });

  await step('X completes a line; both screens show the result', async () => {
    await play(host, guest, '3');
    await play(guest, host, '1');
    await play(host, guest, '5');
    await host.locator('.result', { hasText: 'You won' }).waitFor();
    await guest.locator('.result', { hasText: 'You lost' }).waitFor();
    assert.match(await guest.locator('.result').textContent(), /three in a row/);
    assert.equal((await screen(guest)).status, 'finished');
  });

  await step('rematch: the guest starts the next game, the host is told, X and O swap', async () => {
    const first = new URL(guest.url()).hash;
    await guest.getByRole('button', { name: 'Rematch' }).click();
    await guest.waitForURL((u) => u.hash.startsWith('#/match/') && u.hash !== first);
    await guest.locator('section.match[data-my-seat="x"]').waitFor();
    await host.getByRole('button', { name: 'Go to the next game' }).click();
    await host.locator('section.match[data-my-seat="o"]').waitFor();
    assert.equal(new URL(host.url()).hash, new URL(guest.url()).hash);
  });

  await step('the new X resigns; both see it', async () => {
    await guest.getByRole('button', { name: 'Resign' }).click();
    await guest.getByRole('button', { name: 'Yes, resign' }).click();
    await guest.locator('.result', { hasText: 'You lost' }).waitFor();
    await host.locator('.result', { hasText: 'You won' }).waitFor();
  });
  host.check();
  guest.check();
});
