// Profiles: your own (`/me`) or another player's, with a rating per ladder,
// a chart of each rating's history, and their finished matches.

import * as api from './api.js';
import { ratingChart } from './chart.js';
import { botBadge, challengeForm } from './challenges.js';
import { depthText, h, replace, timeControlText } from './dom.js';

/** A table of ratings (`LadderRating` items), with the ladders' names. */
export function ratingsTable(ratings, ladders) {
  const name = (id) => ladders.find((l) => l.id === id)?.name ?? id;
  return h('table', { class: 'ratings' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Ladder'), h('th', { scope: 'col' }, 'Rating'),
      h('th', { scope: 'col' }, 'Games'), h('th', { scope: 'col' }, 'W / L / D'))),
    h('tbody', {}, ratings.map((r) => h('tr', { dataset: { ladder: r.ladder } },
      h('td', {}, h('a', { href: `#/ladders/${encodeURIComponent(r.ladder)}` }, name(r.ladder))),
      h('td', {}, `${Math.round(r.rating)} ± ${Math.round(r.deviation)}`,
        r.provisional ? h('span', { class: 'badge', title: 'Deviation above 110' }, 'provisional') : null),
      h('td', {}, String(r.games)),
      h('td', {}, `${r.wins} / ${r.losses} / ${r.draws}`)))));
}

/** The rated ladders a challenge to `player` may be played on: bots play only where bots may. */
export function challengeLadders(ladders, player) {
  const bots = player.bot || api.me()?.bot;
  return ladders.filter((l) => l.rated && (!bots || l.bots));
}

/** Mounts the profile of `username` (or your own when null) into `root`. */
export function mount(root, username) {
  const box = h('section', { class: 'screen profile card' }, h('p', {}, 'Loading…'));
  replace(root, box);
  load(box, username);
  return () => {};
}

async function load(box, username) {
  try {
    const own = !username || username.toLowerCase() === api.me()?.username.toLowerCase();
    const [player, ladders] = await Promise.all([
      own ? api.get('/me') : api.get(`/players/${api.seg(username)}`),
      api.get('/ladders'),
    ]);
    const history = h('div', {}, h('p', { class: 'muted' }, 'Loading matches…'));
    const charts = h('div', { class: 'rating-charts' });
    replace(box,
      h('h1', {}, player.username, botBadge(player), own ? h('span', { class: 'muted' }, ' (you)') : null),
      h('p', { class: 'muted' }, `Playing since ${new Date(player.created_at).toLocaleDateString()}`,
        player.role === 'admin' ? ' · admin' : ''),
      own ? null : [h('h2', {}, 'Challenge'), challengeForm(player, challengeLadders(ladders, player))],
      h('h2', {}, 'Ratings'),
      ratingsTable(player.ratings, ladders),
      charts,
      h('h2', {}, 'Finished matches'),
      history);
    loadCharts(charts, player, ladders);
    loadHistory(history, player, null);
  } catch (err) {
    replace(box, h('h1', {}, err.status === 404 ? 'No such player' : 'The profile cannot be shown'),
      h('p', {}, err.message), h('a', { href: '#/' }, 'Back to the lobby'));
  }
}

/** One chart per ladder the player has rated games on (GET /players/{name}/ratings/{ladder}). */
async function loadCharts(box, player, ladders) {
  const played = player.ratings.filter((r) => r.games > 0);
  try {
    const bodies = await Promise.all(played.map((r) =>
      api.get(`/players/${api.seg(player.username)}/ratings/${api.seg(r.ladder)}`)));
    const name = (id) => ladders.find((l) => l.id === id)?.name ?? id;
    replace(box, played.map((r, i) => {
      const svg = ratingChart(bodies[i].history, bodies[i]);
      return svg && h('figure', { class: 'rating-chart', dataset: { ladder: r.ladder } },
        h('figcaption', {}, `${name(r.ladder)}: rating over time`,
          h('span', { class: 'muted' }, ' (shaded: provisional)')),
        svg);
    }));
  } catch (err) {
    replace(box, h('p', { class: 'form-error' }, err.message));
  }
}

async function loadHistory(box, player, cursor) {
  const list = box.querySelector('ul') ?? h('ul', { class: 'plain history' });
  try {
    const query = `?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.get(`/players/${api.seg(player.username)}/matches${query}`);
    if (!cursor) replace(box, list);
    box.querySelector('.more')?.remove();
    if (!page.items.length && !cursor) {
      replace(box, h('p', { class: 'muted' }, 'No finished match yet.'));
      return;
    }
    for (const mt of page.items) {
      const won = mt.winner && mt.winner === mt.seat;
      const outcome = !mt.winner ? 'draw' : won ? 'won' : 'lost';
      list.append(h('li', {},
        h('span', { class: `outcome-tag ${outcome}` }, outcome), ' ',
        h('a', { href: `#/match/${mt.id}` }, `${mt.mode} · ${depthText(mt.depth)} · ${timeControlText(mt.time_control)}`),
        ` · ${mt.ply} moves · ${mt.reason ?? ''} · ${new Date(mt.finished_at ?? mt.created_at).toLocaleString()}`));
    }
    if (page.next_cursor) {
      box.append(h('button', { type: 'button', class: 'more secondary', onclick: () => loadHistory(box, player, page.next_cursor) }, 'More'));
    }
  } catch (err) {
    replace(box, h('p', { class: 'form-error' }, err.message));
  }
}
