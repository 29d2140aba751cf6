// An arena in the web client: a director creates a ten-minute arena in the
// form (kind, duration); a player joins on its page, an opponent through the
// API; the director starts it. The player's page counts the time left down
// and takes them into their game; there they go berserk before their first
// move (their clock shows half, the button goes away and a badge stays);
// the opponent resigns and the page takes the player to the next game,
// where the button is there until the player's first move. A second win in
// a row puts the player on fire, on their page and in the director's
// standings, which follow every result live without a reload. The player
// withdraws and comes back while it runs. The pages fit a phone's width.

import { join } from 'node:path';
import { assert, call, fitsTheWidth, matchId, open, PASSWORD, playMove, run, SHOTS, signUp, step, uniqueName } from './lib.mjs';

/** Ten minutes each, the time control the form offers for tournaments. */
const INITIAL_MS = 600_000;

/** A clock's text (m:ss, or h:mm:ss) in seconds. */
function seconds(text) {
  return text.trim().split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
}

/** The arena's games (all pages), oldest first. */
async function games(id) {
  const all = [];
  let cursor = null;
  do {
    const page = await call('GET', `/tournaments/${id}/games?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    all.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/** The standing of `name` on the director's page: score and whether it shows fire. */
function standingOf(page, name) {
  return page.evaluate((who) => {
    const row = document.querySelector(`table.standings tr[data-player="${who}"]`);
    return row ? { score: Number(row.dataset.score), fire: Boolean(row.querySelector('.badge.fire')) } : null;
  }, name);
}

/** What the match screen shows about berserk: the button, the badge on your seat, your clock in seconds. */
function berserkShown(page) {
  return page.evaluate(() => ({
    button: Boolean(document.querySelector('button.berserk')),
    // Shown in full: not cut off by the seat card (a long name is).
    badge: [...document.querySelectorAll('.seat.me .badge.berserk')].some((b) => {
      const r = b.getBoundingClientRect();
      return r.width > 0 && r.right <= b.closest('.seat').getBoundingClientRect().right;
    }),
    clock: document.querySelector('.seat.me [data-clock]')?.textContent ?? '',
  }));
}

await run('arena', async (browser) => {
  const director = await open(browser);
  const player = await open(browser);
  const dName = uniqueName('ad');
  const pName = uniqueName('ap');
  const name = `Blitz arena ${Date.now().toString(36)}`;
  let id;
  let opponent;

  await step('the director creates a ten-minute arena in the form', async () => {
    await signUp(director, dName);
    await director.getByRole('link', { name: 'Tournaments' }).click();
    const form = director.getByRole('form', { name: 'Create a tournament' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Kind').selectOption('arena');
    assert.equal(await form.getByLabel('Rounds', { exact: true }).isVisible(), false, 'an arena has no rounds');
    await form.getByLabel('Duration (minutes)').fill('10');
    await form.getByLabel('Rated on').selectOption('');
    await form.getByLabel('Board depth').selectOption('1');
    await form.getByLabel('Time control').selectOption('clock-10');
    await form.getByRole('button', { name: 'Create the tournament' }).click();
    await director.waitForURL(/#\/tournaments\/.+/);
    await director.locator('section.tournament[data-status="registering"]').waitFor();
    id = decodeURIComponent(new URL(director.url()).hash.replace('#/tournaments/', ''));
    const t = await call('GET', `/tournaments/${id}`);
    assert.equal(t.kind, 'arena');
    assert.equal(t.duration_ms, 600_000);
    assert.match(await director.locator('.match-meta').textContent(), /Arena · 10 min · tic-tac-toe · 10 min/);
    await director.evaluate(() => { window.notReloaded = true; });
  });

  await step('a player joins on its page, an opponent through the API', async () => {
    await signUp(player, pName);
    await player.getByRole('link', { name: 'Tournaments' }).click();
    await player.locator(`.tournament-list[data-status="registering"] li[data-tournament="${id}"]`).getByRole('link', { name }).click();
    await player.getByRole('form', { name: 'Join the tournament' }).getByRole('button', { name: 'Join' }).click();
    await player.locator('.you-registered').waitFor();
    const oName = uniqueName('ao');
    const reg = await call('POST', '/auth/register', { username: oName, password: PASSWORD });
    await call('POST', `/tournaments/${id}/join`, {}, reg.access_token);
    opponent = { name: oName, token: reg.access_token };
    await director.waitForFunction(() => document.querySelectorAll('table.standings tbody tr').length === 2);
  });

  let first;
  await step('the director starts it: the time left counts down, and the player is taken into their game', async () => {
    // The player looks at the arena's page when it starts.
    await director.getByRole('button', { name: 'Start the tournament' }).click();
    await director.locator('section.tournament[data-status="running"]').waitFor();
    // An arena takes entries while it runs.
    await director.getByRole('form', { name: 'Join the tournament' }).waitFor();
    const countdown = director.locator('.countdown');
    const before = seconds((await countdown.textContent()).replace(/^Ends in |\.$/g, ''));
    assert.ok(before > 590 && before <= 600, `about ten minutes left: ${before} s`);
    await director.waitForFunction((s) => {
      const text = document.querySelector('.countdown')?.textContent ?? '';
      const m = /^Ends in (\d+):(\d\d)\.$/.exec(text);
      return m && Number(m[1]) * 60 + Number(m[2]) < s;
    }, before);
    await player.waitForURL(/#\/match\//);
    await player.locator('section.match[data-status="active"]').waitFor();
    first = matchId(player);
    const game = (await games(id)).find((g) => g.match_id === first);
    assert.ok(game, 'the page went to the arena\'s game');
    assert.equal(game.result, null);
    assert.match(await player.locator('.match-title').textContent(), /^Tournament: /);
    await player.getByRole('link', { name: 'Tournament', exact: true }).waitFor();
  });

  await step('before the first move the player goes berserk: the clock shows half, the button goes, a badge stays', async () => {
    const shown = await berserkShown(player);
    assert.ok(shown.button, 'the berserk button is shown before the first move');
    assert.equal(shown.badge, false);
    assert.ok(seconds(shown.clock) > INITIAL_MS / 2000, `a full clock first: ${shown.clock}`);
    await player.getByRole('button', { name: 'Berserk' }).click();
    await player.waitForFunction(() => !document.querySelector('button.berserk'));
    const after = await berserkShown(player);
    assert.ok(after.badge, 'a berserk badge shows on the player\'s seat');
    assert.ok(seconds(after.clock) <= INITIAL_MS / 2000 && seconds(after.clock) > INITIAL_MS / 2000 - 30,
      `half the clock left: ${after.clock}`);
    const game = (await games(id)).find((g) => g.match_id === first);
    const seat = game.x.username === pName ? 'x' : 'o';
    assert.equal(game.berserk[seat], true, 'the server has the berserk');
    await player.screenshot({ path: join(SHOTS, 'arena-berserk.png'), fullPage: true });
  });

  let second;
  await step('the opponent resigns: the player wins 3 points (berserk), the director sees it live; the page goes to the next game', async () => {
    await call('POST', `/matches/${first}/resign`, {}, opponent.token);
    await director.waitForFunction((who) => document.querySelector(`table.standings tr[data-player="${who}"]`)?.dataset.score === '3', pName);
    await player.waitForURL((url) => /#\/match\//.test(url.hash) && !url.hash.endsWith(first));
    await player.locator('section.match[data-status="active"]').waitFor();
    second = matchId(player);
    const game = (await games(id)).find((g) => g.match_id === second);
    assert.ok(game && game.result === null, 'the new page is the next arena game');
    assert.equal((await standingOf(director, pName)).fire, false, 'one win is no fire yet');
  });

  await step('the berserk button is there in the next game until the player\'s first move', async () => {
    let shown = await berserkShown(player);
    assert.ok(shown.button, 'berserk is offered again in a new game');
    assert.equal(shown.badge, false, 'no berserk badge in the new game');
    const state = await call('GET', `/matches/${second}`, undefined, opponent.token);
    if (state.players.o.username === pName) {
      // O's first move comes after X's: the button stays while X moves.
      await call('POST', `/matches/${second}/moves`, { ply: 0, address: state.next.legal[0] }, opponent.token);
      await player.locator('section.match[data-ply="1"]').waitFor();
      assert.ok((await berserkShown(player)).button, 'O may still go berserk after X\'s first move');
    }
    await playMove(player);
    await player.waitForFunction(() => !document.querySelector('button.berserk'));
    shown = await berserkShown(player);
    assert.equal(shown.badge, false);
    assert.ok(seconds(shown.clock) > INITIAL_MS / 2000, `the clock was not halved: ${shown.clock}`);
  });

  await step('a second win in a row: the player is on fire on their page and in the director\'s live standings', async () => {
    await call('POST', `/matches/${second}/resign`, {}, opponent.token);
    await director.locator(`table.standings tr[data-player="${pName}"][data-score="5"] .badge.fire`).waitFor();
    // A third game is paired; the player leaves it for the arena's page.
    await player.waitForURL((url) => /#\/match\//.test(url.hash) && !url.hash.endsWith(second));
    await player.locator('section.match[data-status="active"]').waitFor();
    await player.getByRole('link', { name: 'Tournament', exact: true }).click();
    await player.locator('section.tournament[data-status="running"]').waitFor();
    const you = player.locator('.tournament-you');
    await you.locator('.badge.fire').waitFor();
    assert.match(await you.textContent(), /5 points/);
    assert.match(await you.textContent(), /2 wins in a row/);
    await you.getByRole('link', { name: 'Go to your game' }).waitFor();
    const left = seconds((await player.locator('.countdown').textContent()).replace(/^Ends in |\.$/g, ''));
    assert.ok(left > 0 && left < 600, `the player sees the time left: ${left} s`);
    await player.waitForFunction((s) => {
      const m = /^Ends in (\d+):(\d\d)\.$/.exec(document.querySelector('.countdown')?.textContent ?? '');
      return m && Number(m[1]) * 60 + Number(m[2]) < s;
    }, left);
    const api = (await call('GET', `/tournaments/${id}/standings`)).items.find((r) => r.player.username === pName);
    assert.equal(api.score, 5);
    assert.equal(api.tiebreaks.fire, true);
    assert.equal(await director.evaluate(() => window.notReloaded), true, 'the director\'s page was never reloaded');
    await director.screenshot({ path: join(SHOTS, 'arena-standings.png'), fullPage: true });
  });

  await step('the player withdraws (the director sees it live) and comes back', async () => {
    await player.getByRole('button', { name: 'Withdraw' }).click();
    await player.getByRole('button', { name: 'Yes, withdraw' }).click();
    await player.locator('.you-paused').waitFor();
    await director.locator(`table.standings tr[data-player="${pName}"] .badge`, { hasText: 'withdrawn' }).waitFor();
    await player.getByRole('button', { name: 'Come back' }).click();
    await player.locator('.you-paused').waitFor({ state: 'detached' });
    await player.locator('.you-arena').waitFor();
    await director.locator(`table.standings tr[data-player="${pName}"] .badge`, { hasText: 'withdrawn' }).waitFor({ state: 'detached' });
    const api = (await call('GET', `/tournaments/${id}/standings`)).items.find((r) => r.player.username === pName);
    assert.equal(api.withdrawn, false);
  });

  await step('on a phone\'s width the arena page and the game fit', async () => {
    for (const page of [director, player]) {
      await page.setViewportSize({ width: 390, height: 844 });
      await fitsTheWidth(page);
    }
    await player.screenshot({ path: join(SHOTS, 'arena-phone.png'), fullPage: true });
    await player.locator('.tournament-you').getByRole('link', { name: 'Go to your game' }).click();
    await player.locator('section.match[data-status="active"]').waitFor();
    await fitsTheWidth(player);
  });
  director.check();
  player.check();
});
