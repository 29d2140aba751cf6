// A Swiss tournament in the web client: a director creates a private
// two-round Swiss in the form; one player finds it in the list and joins
// with the entry code (a wrong code is refused), withdraws and joins again;
// four more join through the API and the director removes one; the
// director starts it; the tournament page takes the player to their game; they go back
// to the tournament by the match's link and clicks through to the game
// again; results show in the director's standings live, without a reload;
// round 2 is paired and the player's finished game takes them to the new one;
// they resign it in the UI; the tournament finishes with final standings
// that match the API's, and the export links answer. The pages fit a
// phone's width.

import { join } from 'node:path';
import { assert, BASE, call, fitsTheWidth, open, PASSWORD, run, SHOTS, signUp, step, uniqueName } from './lib.mjs';

const CODE = 'club42';

/** What the tournament page shows: status, round, standings rows, pairings rows. */
function shown(page) {
  return page.evaluate(() => {
    const t = document.querySelector('section.tournament');
    if (!t) return null;
    const rows = (sel) => [...document.querySelectorAll(sel)];
    return {
      status: t.dataset.status,
      round: Number(t.dataset.round),
      text: document.querySelector('.tournament-status')?.textContent ?? '',
      standings: rows('table.standings tbody tr').map((r) => ({
        name: r.dataset.player, score: Number(r.dataset.score), cells: [...r.cells].map((c) => c.textContent),
      })),
      pairings: rows('table.pairings tbody tr').map((r) => ({ match: r.dataset.match, result: r.dataset.result })),
      director: !document.querySelector('.tournament-director').hidden,
    };
  });
}

/** The match id of `name`'s game in a round, from the API, with both seats' names. */
async function gameOf(id, round, name) {
  const r = await call('GET', `/tournaments/${id}/rounds/${round}`);
  return r.pairings.find((p) => p.x.username === name || p.o.username === name);
}

await run('tournament', async (browser) => {
  const director = await open(browser);
  const player = await open(browser);
  const dName = uniqueName('td');
  const pName = uniqueName('tp');
  const name = `Club night ${Date.now().toString(36)}`;
  let id;

  await step('the director creates a private two-round Swiss in the form', async () => {
    await signUp(director, dName);
    await director.getByRole('link', { name: 'Tournaments' }).click();
    const form = director.getByRole('form', { name: 'Create a tournament' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Rounds', { exact: true }).fill('2');
    await form.getByLabel('Rated on').selectOption('');
    await form.getByLabel('Board depth').selectOption('1');
    await form.getByLabel('Time control').selectOption('turn-30');
    await form.getByLabel('Pause between rounds (seconds)').fill('1');
    await form.getByLabel('Entry code').fill(CODE);
    await form.getByRole('button', { name: 'Create the tournament' }).click();
    await director.waitForURL(/#\/tournaments\/.+/);
    await director.locator('section.tournament[data-status="registering"]').waitFor();
    id = decodeURIComponent(new URL(director.url()).hash.replace('#/tournaments/', ''));
    await director.getByRole('heading', { name }).waitFor();
    const s = await shown(director);
    assert.ok(s.director, 'the director sees the director\'s controls');
    assert.match(await director.locator('.match-meta').textContent(), /Swiss · 2 rounds · tic-tac-toe · 30 s a turn · casual/);
    assert.match(s.text, /Taking entries until the director starts it/);
    // The page is live from here on: a reload would drop this mark.
    await director.evaluate(() => { window.notReloaded = true; });
  });

  await step('a player finds it under Upcoming and joins with the entry code (a wrong one is refused), withdraws and joins again', async () => {
    await signUp(player, pName);
    await player.getByRole('link', { name: 'Tournaments' }).click();
    const item = player.locator(`.tournament-list[data-status="registering"] li[data-tournament="${id}"]`);
    await item.waitFor();
    assert.match(await item.textContent(), /entry code/);
    await item.getByRole('link', { name }).click();
    await player.locator('section.tournament[data-status="registering"]').waitFor();
    assert.equal((await shown(player)).director, false, 'a player does not see the director\'s controls');
    const form = player.getByRole('form', { name: 'Join the tournament' });
    await form.getByLabel('Entry code').fill('wrong');
    await form.getByRole('button', { name: 'Join' }).click();
    await form.locator('.form-error:not(:empty)').waitFor();
    await form.getByLabel('Entry code').fill(CODE);
    await form.getByRole('button', { name: 'Join' }).click();
    await player.locator('.you-registered').waitFor();
    // Withdrawing before the start takes the entry back; joining again works.
    await player.getByRole('button', { name: 'Withdraw' }).click();
    await player.getByRole('button', { name: 'Yes, withdraw' }).click();
    await form.getByRole('button', { name: 'Join' }).waitFor();
    await form.getByLabel('Entry code').fill(CODE);
    await form.getByRole('button', { name: 'Join' }).click();
    await player.locator('.you-registered').waitFor();
    await player.screenshot({ path: join(SHOTS, 'tournament-registered.png'), fullPage: true });
  });

  const others = {};
  await step('four more join through the API; the director\'s page counts them live and removes one', async () => {
    for (const prefix of ['tc', 'te', 'tf', 'tg']) {
      const who = uniqueName(prefix);
      const reg = await call('POST', '/auth/register', { username: who, password: PASSWORD });
      await call('POST', `/tournaments/${id}/join`, { entry_code: CODE }, reg.access_token);
      others[who] = reg.access_token;
    }
    await director.waitForFunction(() => document.querySelectorAll('table.standings tbody tr').length === 5);
    await director.locator('.match-meta', { hasText: '· 5 players' }).waitFor();
    const removed = Object.keys(others)[3];
    delete others[removed];
    const row = director.locator(`table.standings tr[data-player="${removed}"]`);
    await row.getByRole('button', { name: 'Remove' }).click();
    await row.getByRole('button', { name: 'Yes, remove' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await shown(director)).standings.length, 4);
    await director.locator('.match-meta', { hasText: '· 4 players' }).waitFor();
  });

  let first;
  await step('the director starts it; the player is taken to their round 1 game', async () => {
    await director.getByRole('button', { name: 'Start the tournament' }).click();
    await director.locator('section.tournament[data-status="running"][data-round="1"]').waitFor();
    await director.waitForFunction(() => document.querySelectorAll('table.pairings tbody tr').length === 2);
    assert.match((await shown(director)).text, /Round 1 of 2 is being played/);
    first = await gameOf(id, 1, pName);
    await player.waitForURL(new RegExp(`#/match/${first.match_id}$`));
    await player.locator('section.match[data-status="active"]').waitFor();
    assert.match(await player.locator('.match-title').textContent(), /^Tournament: /);
    await director.screenshot({ path: join(SHOTS, 'tournament-round1.png'), fullPage: true });
  });

  await step('the match links back to the tournament, whose page has "Go to your game"', async () => {
    await player.getByRole('link', { name: 'Tournament — round 1' }).click();
    await player.locator('section.tournament[data-round="1"]').waitFor();
    const mine = player.locator('.your-game');
    assert.match(await mine.textContent(), /Round 1: you play [XO] against /);
    await mine.getByRole('link', { name: 'Go to your game' }).click();
    await player.waitForURL(new RegExp(`#/match/${first.match_id}$`));
    await player.locator('section.match[data-status="active"]').waitFor();
  });

  await step('the opponent resigns: the player wins, the director\'s standings show it live', async () => {
    const opponent = first.x.username === pName ? first.o.username : first.x.username;
    await call('POST', `/matches/${first.match_id}/resign`, {}, others[opponent]);
    await player.locator('.result-headline', { hasText: 'You won' }).waitFor();
    await director.locator(`table.standings tr[data-player="${pName}"][data-score="1"]`).waitFor();
    const row = (await shown(director)).standings.find((r) => r.name === pName);
    assert.equal(row.cells[2], '1', 'score 1 shown');
    await director.locator(`table.pairings tr[data-match="${first.match_id}"] .result-cell`, { hasText: /1–0|0–1/ }).waitFor();
  });

  let second;
  await step('the other game ends; round 2 is paired and the player\'s finished game takes them to the next', async () => {
    // The player stays on their finished game (the tournament page followed them into round 1).
    await player.getByRole('link', { name: 'Back to the tournament' }).waitFor();
    const other = (await call('GET', `/tournaments/${id}/rounds/1`)).pairings.find((p) => p.match_id !== first.match_id);
    await call('POST', `/matches/${other.match_id}/resign`, {}, others[other.x.username]);
    await player.waitForURL((url) => /#\/match\//.test(url.hash) && !url.hash.endsWith(first.match_id));
    second = await gameOf(id, 2, pName);
    assert.ok(new URL(player.url()).hash.endsWith(second.match_id), 'the page went to the round 2 game');
    await player.getByRole('link', { name: 'Tournament — round 2' }).waitFor();
    await director.locator('section.tournament[data-round="2"]').waitFor();
    assert.match((await shown(director)).text, /Round 2 of 2 is being played/);
  });

  await step('the player resigns round 2 in the UI; the tournament finishes with the API\'s final standings', async () => {
    await player.locator('section.match[data-status="active"]').waitFor();
    await player.getByRole('button', { name: 'Resign' }).click();
    await player.getByRole('button', { name: 'Yes, resign' }).click();
    await player.locator('.result-headline', { hasText: 'You lost' }).waitFor();
    const other = (await call('GET', `/tournaments/${id}/rounds/2`)).pairings.find((p) => p.match_id !== second.match_id);
    await call('POST', `/matches/${other.match_id}/resign`, {}, others[other.o.username]);
    await director.locator('section.tournament[data-status="finished"]').waitFor();
    await director.getByRole('heading', { name: 'Final standings' }).waitFor();
    const api = (await call('GET', `/tournaments/${id}/standings`)).items.map((r) => [r.player.username, r.score]);
    // The status shows at once; the standings follow as soon as they are re-read.
    let s;
    for (let tries = 0; tries < 50; tries += 1) {
      s = await shown(director);
      if (JSON.stringify(s.standings.map((r) => [r.name, r.score])) === JSON.stringify(api)) break;
      await director.waitForTimeout(100);
    }
    assert.deepEqual(s.standings.map((r) => [r.name, r.score]), api);
    assert.equal(s.standings.find((r) => r.name === pName).score, 1);
    assert.match(s.text, /Finished/);
    assert.equal(s.director, false, 'no controls once it is over');
    assert.equal(await director.evaluate(() => window.notReloaded), true, 'the director\'s page was never reloaded');
    await player.getByRole('link', { name: 'Tournament — round 2' }).click();
    await player.locator('.you-final').waitFor();
    assert.match(await player.locator('.you-final').textContent(), /You finished \d+(st|nd|rd|th) with 1 point\./);
    await director.screenshot({ path: join(SHOTS, 'tournament-final.png'), fullPage: true });
  });

  await step('the export links answer 200 with the players in them', async () => {
    const links = await director.locator('.exports a').evaluateAll((as) => as.map((a) => a.href));
    assert.equal(links.length, 2);
    for (const link of links) {
      const res = await fetch(link);
      assert.equal(res.status, 200, link);
      assert.ok((await res.text()).includes(pName), `${link} names the player`);
    }
  });

  await step('on a phone\'s width the list and the page fit, the standings show score and Buchholz', async () => {
    await director.setViewportSize({ width: 390, height: 844 });
    await fitsTheWidth(director);
    await director.screenshot({ path: join(SHOTS, 'tournament-phone.png'), fullPage: true });
    assert.ok(await director.locator('table.standings td.buchholz').first().isVisible());
    await director.goto(`${BASE}/#/tournaments`);
    await director.locator(`.tournament-list[data-status="finished"] li[data-tournament="${id}"]`).waitFor();
    await fitsTheWidth(director);
  });
  director.check();
  player.check();
});
