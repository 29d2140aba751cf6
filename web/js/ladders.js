// Ladders and their leaderboards.

import * as api from './api.js';
import { h, replace, showError, timeControlText } from './dom.js';
import { startQueue } from './lobby.js';
import { botBadge, challengeForm } from './challenges.js';
import { challengeLadders } from './profile.js';

/** Mounts the list of ladders, or one ladder's leaderboard when `id` is given. */
export function mount(root, id, go) {
  const box = h('section', { class: 'screen ladders' }, h('p', {}, 'Loading…'));
  replace(root, box);
  load(box, id, go);
  return () => {};
}

async function load(box, id, go) {
  let ladders;
  try {
    ladders = await api.get('/ladders');
  } catch (err) {
    replace(box, h('p', { class: 'form-error' }, err.message));
    return;
  }
  const shown = id ? ladders.filter((l) => l.id === id) : ladders;
  if (!shown.length) {
    replace(box, h('h1', {}, 'No such ladder'), h('a', { href: '#/ladders' }, 'All ladders'));
    return;
  }
  replace(box, h('h1', {}, id ? shown[0].name : 'Leaderboards'),
    id ? h('p', {}, h('a', { href: '#/ladders' }, 'All ladders')) : null,
    h('div', { class: 'cards' }, shown.map((l) => ladderCard(l, go, id ? 100 : 10))));
}

function ladderCard(ladder, go, limit) {
  const table = h('tbody', {});
  const more = h('div', {});
  const card = h('div', { class: 'card', dataset: { ladder: ladder.id } },
    h('h2', {}, h('a', { href: `#/ladders/${encodeURIComponent(ladder.id)}` }, ladder.name)),
    h('p', { class: 'muted' }, `Depth ${ladder.depth} · ${timeControlText(ladder.time_control)} · ${ladder.rated ? 'rated' : 'unrated'}`),
    h('button', { type: 'button', class: 'primary', onclick: () => startQueue(ladder.id, go).catch(showError) }, 'Find an opponent'),
    h('table', { class: 'leaderboard' },
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col' }, 'Rating'),
        h('th', { scope: 'col' }, 'Games'), h('th', { scope: 'col' }, 'W / L / D'),
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Challenge')))),
      table),
    more);
  page(ladder, table, more, null, limit);
  return card;
}

/** Opens (or closes) a challenge form under a leaderboard row, on this ladder by default. */
async function toggleChallenge(row, player, ladder) {
  const open = row.nextElementSibling?.classList.contains('challenge-row');
  if (open) {
    row.nextElementSibling.remove();
    return;
  }
  try {
    const ladders = challengeLadders(await api.get('/ladders'), player);
    const preset = ladders.some((l) => l.id === ladder.id) ? ladder.id : '';
    row.after(h('tr', { class: 'challenge-row' },
      h('td', { colspan: 6 }, challengeForm(player, ladders, preset))));
  } catch (err) {
    showError(err);
  }
}

async function page(ladder, table, more, cursor, limit) {
  try {
    const q = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = await api.get(`/ladders/${api.seg(ladder.id)}/leaderboard${q}`);
    if (!cursor && !body.items.length) {
      table.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' },
        'No established player yet: a player is ranked while their rating deviation, which grows between games, is at most 110.')));
    }
    for (const e of body.items) {
      const row = h('tr', { dataset: { player: e.player.username } },
        h('td', {}, String(e.rank)),
        h('td', {}, h('a', { href: `#/players/${encodeURIComponent(e.player.username)}` }, e.player.username),
          botBadge(e.player)),
        h('td', {}, `${Math.round(e.rating)} ± ${Math.round(e.deviation)}`,
          e.provisional ? h('span', { class: 'badge' }, 'provisional') : null),
        h('td', {}, String(e.games)),
        h('td', {}, `${e.wins} / ${e.losses} / ${e.draws}`),
        h('td', {}, e.player.id === api.me()?.id ? null
          : h('button', { type: 'button', class: 'secondary small', onclick: () => toggleChallenge(row, e.player, ladder) }, 'Challenge')));
      table.append(row);
    }
    replace(more, body.next_cursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => page(ladder, table, more, body.next_cursor, limit) }, 'More')
      : null);
  } catch (err) {
    replace(more, h('p', { class: 'form-error' }, err.message));
  }
}
