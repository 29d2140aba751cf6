// Challenges: a player challenges another from their profile; the
// challenged player sees a notice with Accept / Decline on whatever screen
// they are; a declined and a cancelled challenge say so on both sides; an
// accepted one opens the same match for both. A bot account (an API client
// here) is marked "bot" in its challenge and on its profile.

import { assert, BASE, call, open, PASSWORD, run, screen, signUp, step, uniqueName } from './lib.mjs';

/** Fills the challenge form on the profile shown and sends it. */
async function challenge(page, name, { depth = '1', time = 'none', seat = 'x' } = {}) {
  const form = page.getByRole('form', { name: `Challenge ${name}` });
  await form.getByLabel('Rated on').selectOption('');
  await form.getByLabel('Board depth').selectOption(depth);
  await form.getByLabel('Time control').selectOption(time);
  await form.getByLabel('You play').selectOption(seat);
  await form.getByRole('button', { name: `Challenge ${name}` }).click();
  await page.locator('.challenge-status[data-status="pending"]').waitFor();
}

await run('challenge', async (browser) => {
  const first = await open(browser);
  const second = await open(browser);
  const a = uniqueName('ann');
  const b = uniqueName('bob');
  await step('two players sign up; the first opens the second one\'s profile', async () => {
    await signUp(first, a);
    await signUp(second, b);
    await first.goto(`${BASE}/#/players/${b}`);
    await first.getByRole('heading', { name: 'Challenge' }).waitFor();
  });

  const incoming = second.getByRole('alertdialog', { name: `Challenge from ${a}` });
  await step('a declined challenge: the notice shows the terms, the challenger is told', async () => {
    await challenge(first, b);
    await incoming.waitFor();
    assert.match(await incoming.textContent(), /tic-tac-toe · no time limit · casual · you play O/);
    await incoming.getByRole('button', { name: 'Decline' }).click();
    await first.locator('.challenge-status[data-status="declined"]').waitFor();
    assert.equal(await incoming.count(), 0);
  });

  await step('a cancelled challenge disappears from the challenged player\'s screen', async () => {
    await first.getByRole('button', { name: 'Challenge again' }).click();
    await challenge(first, b);
    await incoming.waitFor();
    await first.getByRole('button', { name: 'Cancel the challenge' }).click();
    await first.locator('.challenge-status[data-status="cancelled"]').waitFor();
    await incoming.waitFor({ state: 'detached' });
  });

  await step('an accepted challenge opens the same match for both', async () => {
    await first.getByRole('button', { name: 'Challenge again' }).click();
    // The challenged player is elsewhere: notices show on every screen.
    await second.goto(`${BASE}/#/ladders`);
    await challenge(first, b, { depth: '2', time: 'turn-60', seat: 'o' });
    await incoming.getByRole('button', { name: 'Accept' }).click();
    await second.waitForURL(/#\/match\//);
    await first.waitForURL(/#\/match\//);
    assert.equal(new URL(first.url()).hash, new URL(second.url()).hash);
    for (const p of [first, second]) await p.locator('section.match[data-my-seat]:not([data-my-seat=""])').waitFor();
    assert.equal((await screen(first)).mySeat, 'o');
    assert.equal((await screen(second)).mySeat, 'x');
  });

  await step('a bot\'s challenge and profile are marked "bot"', async () => {
    const name = uniqueName('bot');
    const reg = await call('POST', '/auth/register', { username: name, password: PASSWORD });
    const me = await call('POST', '/me/bot', {}, reg.access_token);
    assert.equal(me.bot, true);
    await call('POST', '/challenges', { username: b, depth: 1, time_control: { kind: 'none' } }, reg.access_token);
    const fromBot = second.getByRole('alertdialog', { name: `Challenge from ${name}` });
    await fromBot.waitFor();
    assert.equal(await fromBot.locator('.badge.bot').count(), 1);
    await fromBot.getByRole('button', { name: 'Decline' }).click();
    await fromBot.waitFor({ state: 'detached' });
    await first.goto(`${BASE}/#/players/${name}`);
    await first.getByRole('heading', { name }).locator('.badge.bot').waitFor();
  });
  first.check();
  second.check();
});
