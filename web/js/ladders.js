// Ladders and their leaderboards.

import * as api from './api.js';
import { h, replace, showError, timeControlText } from './dom.js';
import { startQueue } from './lobby.js';

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
        h('th', { scope: 'col' }, 'Games'), h('th', { scope: 'col' }, 'W / L / D'))),
      table),
    more);
  page(ladder, table, more, null, limit);
  return card;
}

async function page(ladder, table, more, cursor, limit) {
  try {
    const q = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = await api.get(`/ladders/${api.seg(ladder.id)}/leaderboard${q}`);
    if (!cursor && !body.items.length) {
      table.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' },
        'No established player yet: a player is ranked while their rating deviation, which grows between games, is at most 110.')));
    }
    for (const e of body.items) {
      table.append(h('tr', {},
        h('td', {}, String(e.rank)),
        h('td', {}, h('a', { href: `#/players/${encodeURIComponent(e.player.username)}` }, e.player.username)),
        h('td', {}, `${Math.round(e.rating)} ± ${Math.round(e.deviation)}`,
          e.provisional ? h('span', { class: 'badge' }, 'provisional') : null),
        h('td', {}, String(e.games)),
        h('td', {}, `${e.wins} / ${e.losses} / ${e.draws}`)));
    }
    replace(more, body.next_cursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => page(ladder, table, more, body.next_cursor, limit) }, 'More')
      : null);
  } catch (err) {
    replace(more, h('p', { class: 'form-error' }, err.message));
  }
}
