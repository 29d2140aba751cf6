// One tournament's page: its settings, joining (with the entry code when it
// has one) and withdrawing, the standings (score, Buchholz,
// Sonneborn-Berger), a round's pairings and bye, your game one click away,
// the export links, and the director's controls (start, cancel, remove a
// player) for the director only. Live from the tournament's event stream
// (event `tournament`, id = version): each change re-reads the standings and
// the round. When `tournament_pairing` for this tournament arrives on the
// player's own stream, the page goes to the new game. An arena shows the
// time left, your points and streak (on fire), who is on fire, and your game
// (where the match screen offers berserk before your first move).
//
// Over 400 lines: the page's parts (you, director, standings, round) render
// from one shared view and re-read; split it when the arena's parts grow.

import * as api from './api.js';
import { onEvent } from './challenges.js';
import { format } from './clock.js';
import { formError, field, h, ordinal, replace, scoreText, showError } from './dom.js';
import { follow, indicator } from './live.js';
import { settingsText, startText } from './tournaments.js';

/** Standings pages read at most (100 players each). */
const STANDINGS_PAGES = 20;
const RESULTS = { x: '1–0', o: '0–1', draw: '½–½' };

/** Mounts the tournament `id` into `root`; answers the function that unmounts it. */
export function mount(root, id, go) {
  const t = {
    id,
    go,
    view: null,
    standings: [],
    rounds: new Map(),
    shown: null,
    picked: false,
    confirm: null,
    closed: false,
    off: [],
  };
  t.parts = {
    title: h('h1', { class: 'tournament-title' }, 'Tournament'),
    meta: h('p', { class: 'match-meta' }),
    status: h('p', { class: 'status tournament-status', role: 'status' }),
    you: h('div', { class: 'card tournament-you', 'aria-label': 'You' }),
    director: h('div', { class: 'card tournament-director', hidden: true }),
    standings: h('div', { class: 'card tournament-standings' }),
    round: h('div', { class: 'card tournament-round', hidden: true }),
    exports: h('p', { class: 'exports' }),
    live: indicator(),
  };
  const p = t.parts;
  t.el = h('section', { class: 'screen tournament', dataset: { tournament: id } },
    h('p', {}, h('a', { href: '#/tournaments' }, 'All tournaments')),
    h('header', { class: 'match-head' }, p.title, p.meta, p.status),
    h('div', { class: 'tournament-body' },
      h('div', { class: 'tournament-side' }, p.you, p.director),
      h('div', { class: 'tournament-main' }, p.standings, p.round)),
    h('footer', { class: 'tournament-foot' }, p.exports, h('p', { class: 'conn' }, p.live.el)));
  replace(root, t.el);
  t.off.push(onEvent('tournament_pairing', (d) => {
    if (!t.closed && d.tournament_id === id && d.match_id) go(`#/match/${d.match_id}`);
  }));
  load(t);
  t.ticker = setInterval(() => tickCountdown(t), 1000);
  return () => {
    t.closed = true;
    clearInterval(t.ticker);
    t.stream?.close();
    for (const off of t.off) off();
  };
}

async function load(t) {
  try {
    await apply(t, await api.get(`/tournaments/${api.seg(t.id)}`));
    connect(t);
  } catch (err) {
    if (t.closed) return;
    replace(t.el, h('div', { class: 'card' },
      h('h1', {}, 'This tournament cannot be shown'),
      h('p', {}, err.status === 404 ? 'There is no tournament with this link.' : err.message),
      h('p', {}, h('a', { href: '#/tournaments' }, 'All tournaments'))));
  }
}

/** Follows the tournament's event stream (reading it again whenever the stream is lost). */
function connect(t) {
  if (t.closed) return;
  t.stream = follow({
    path: `/tournaments/${api.seg(t.id)}/events`,
    event: 'tournament',
    onData: (view) => apply(t, view).catch(showError),
    reread: async () => apply(t, await api.get(`/tournaments/${api.seg(t.id)}`)),
    live: t.parts.live,
  });
}

/** Takes a newer view of the tournament, then re-reads the standings and the round. */
async function apply(t, next) {
  if (!next || next.id !== t.id || t.closed) return;
  const prev = t.view;
  if (prev && next.version <= prev.version) return;
  t.view = next;
  if (!t.picked || !t.shown) t.shown = next.round || null;
  render(t);
  await refresh(t);
  // A new round while the page is open: go to your game (in case the
  // player's own stream missed `tournament_pairing`).
  if (prev && next.round > prev.round) {
    const game = myPairing(t, next.round);
    if (game && !game.result && !t.closed) t.go(`#/match/${game.match_id}`);
  }
}

/**
 * Re-reads the standings and the round (or the arena's games). Changes come
 * in bursts (every result is one): while a re-read runs, further calls wait
 * for one more that starts after it.
 */
function refresh(t) {
  if (t.refreshing) {
    t.again = true;
    return t.refreshing;
  }
  t.refreshing = (async () => {
    do {
      t.again = false;
      await reread(t);
    } while (t.again && !t.closed);
  })().finally(() => { t.refreshing = null; });
  return t.refreshing;
}

async function reread(t) {
  const v = t.view;
  const arena = v.kind === 'arena';
  const [standings, round, game] = await Promise.all([
    allStandings(t.id),
    !arena && v.round > 0 ? api.get(`/tournaments/${api.seg(t.id)}/rounds/${v.round}`) : null,
    arena && v.status === 'running' && api.me() ? myArenaGame(t.id) : null,
  ]);
  if (t.closed) return;
  t.standings = standings;
  // A new game of yours while the page is open: go to it (in case the
  // player's own stream missed `tournament_pairing`).
  const seen = t.arenaGame;
  t.arenaGame = game;
  if (game && seen !== undefined && game.id !== seen?.id) t.go(`#/match/${game.id}`);
  if (round) t.rounds.set(round.round, round);
  if (t.shown && t.shown !== v.round && !t.rounds.has(t.shown)) {
    t.rounds.set(t.shown, await api.get(`/tournaments/${api.seg(t.id)}/rounds/${t.shown}`));
  }
  render(t);
}

async function allStandings(id) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < STANDINGS_PAGES; i += 1) {
    const q = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = await api.get(`/tournaments/${api.seg(id)}/standings${q}`);
    items.push(...body.items);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return items;
}

/**
 * Your unfinished game in the arena `id` (its match state), or null: of your
 * unfinished matches (a handful at most), the one paired by this arena.
 */
async function myArenaGame(id) {
  const mine = await api.get('/me/matches?status=active&limit=100');
  for (const m of mine.items.filter((x) => x.mode === 'tournament')) {
    const state = await api.get(`/matches/${api.seg(m.id)}`);
    if (state.tournament?.id === id && state.status === 'active') return state;
  }
  return null;
}

function mine(t) {
  const me = api.me();
  return me ? t.standings.find((s) => s.player.id === me.id) ?? null : null;
}

function myPairing(t, n) {
  const me = api.me();
  return t.rounds.get(n)?.pairings.find((p) => p.x.id === me?.id || p.o.id === me?.id) ?? null;
}

function isDirector(t) {
  return t.view.director.id === api.me()?.id;
}

// ---------------------------------------------------------------- rendering

function render(t) {
  const v = t.view;
  if (!v) return;
  const p = t.parts;
  t.el.dataset.status = v.status;
  t.el.dataset.round = String(v.round);
  document.title = `${v.name} · uttt`;
  replace(p.title, v.name, h('span', { class: `badge status-${v.status}` }, v.status));
  const cap = v.max_players ? ` of ${v.max_players}` : '';
  replace(p.meta, `${settingsText(v)} · directed by `,
    h('a', { href: `#/players/${encodeURIComponent(v.director.username)}` }, v.director.username),
    ` · ${v.players}${cap} player${v.players === 1 ? '' : 's'}`,
    v.private ? ' · entry code needed' : '',
    v.min_rating ? ` · rating ${Math.round(v.min_rating)}+` : '');
  replace(p.status, statusText(t), v.kind === 'arena' && v.status === 'running' ? [' ', h('span', { class: 'countdown' })] : null);
  tickCountdown(t);
  renderYou(t);
  renderDirector(t);
  renderStandings(t);
  renderRound(t);
  renderExports(t);
}

function statusText(t) {
  const v = t.view;
  switch (v.status) {
    case 'registering': return v.starts_at ? `Taking entries · starts ${startText(v)}.` : 'Taking entries until the director starts it.';
    case 'finished': return 'Finished: the standings are final.';
    case 'cancelled': return 'Cancelled.';
    default: {
      if (v.kind === 'arena') return 'Being played: a player who finishes a game is paired again.';
      const round = t.rounds.get(v.round);
      const over = round && round.pairings.every((g) => g.result);
      if (over && v.round < v.rounds) return `Round ${v.round} of ${v.rounds} is over; round ${v.round + 1} is paired shortly.`;
      return `Round ${v.round} of ${v.rounds} is being played.`;
    }
  }
}

function renderYou(t) {
  const v = t.view;
  const me = mine(t);
  const items = [h('h2', {}, 'You')];
  const arena = v.kind === 'arena';
  // An arena takes entries while it runs, and a player who withdrew may come back.
  const open = v.status === 'registering' || (arena && v.status === 'running');
  if (me && me.withdrawn && arena && v.status === 'running') {
    items.push(arenaPoints(me), h('p', { class: 'you-paused' }, 'You withdrew: you are not paired until you come back.'),
      h('button', {
        type: 'button',
        class: 'primary',
        onclick: async () => {
          try {
            await api.post(`/tournaments/${api.seg(t.id)}/join`);
            await refresh(t);
          } catch (err) {
            showError(err);
          }
        },
      }, 'Come back'));
  } else if (me && me.withdrawn) {
    items.push(h('p', {}, 'You withdrew: you are no longer paired.'));
  } else if (me && v.status === 'finished') {
    items.push(h('p', { class: 'you-final' }, `You finished ${ordinal(me.rank)} with ${scoreText(me.score)} point${me.score === 1 ? '' : 's'}.`));
  } else if (me && v.status === 'registering') {
    items.push(h('p', { class: 'you-registered' }, 'You are registered.'));
  } else if (me && v.status === 'running') {
    if (arena) items.push(arenaPoints(me), arenaGame(t));
    else items.push(yourGame(t));
  }
  // One form for the page's life: a re-render must not wipe a code being typed.
  if (!me && open) items.push(t.joinForm ??= joinForm(t));
  else if (!me && v.status === 'running') items.push(h('p', { class: 'muted' }, 'Entries are closed: you may watch the games.'));
  if (me && !me.withdrawn && (v.status === 'registering' || v.status === 'running')) {
    items.push(confirmed(t, 'withdraw', 'Withdraw', 'Withdraw from the tournament?', 'Yes, withdraw',
      () => api.post(`/tournaments/${api.seg(t.id)}/withdraw`)));
  }
  // Nothing to say to someone who did not enter a tournament that is over.
  t.parts.you.hidden = items.length === 1;
  replace(t.parts.you, items);
}

/** Your game in the current round: one click to it, its result, or your bye. */
function yourGame(t) {
  const v = t.view;
  const round = t.rounds.get(v.round);
  const game = myPairing(t, v.round);
  const me = api.me();
  if (round?.bye?.id === me?.id) return h('p', { class: 'your-game' }, `You have the bye in round ${v.round}: 1 point.`);
  if (!game) return h('p', { class: 'your-game muted' }, 'Waiting for the next pairing…');
  const seat = game.x.id === me.id ? 'x' : 'o';
  const opponent = seat === 'x' ? game.o : game.x;
  if (!game.result) {
    return h('div', { class: 'your-game', dataset: { match: game.match_id } },
      h('p', {}, `Round ${v.round}: you play ${seat.toUpperCase()} against ${opponent.username}.`),
      h('a', { class: 'button primary', href: `#/match/${game.match_id}` }, 'Go to your game'));
  }
  const outcome = game.result === 'draw' ? 'drew' : game.result === seat ? 'won' : 'lost';
  const next = v.round < v.rounds ? ' The next round is paired when every game has ended.' : '';
  return h('p', { class: 'your-game', dataset: { match: game.match_id } },
    `Round ${v.round}: you ${outcome} against ${opponent.username}.${next} `,
    h('a', { href: `#/match/${game.match_id}` }, 'See the game'));
}

/** When an arena ends (ms since the epoch), or null. */
function arenaEnd(v) {
  if (v.ends_at) return Date.parse(v.ends_at);
  return v.starts_at && v.duration_ms ? Date.parse(v.starts_at) + v.duration_ms : null;
}

/** Updates a running arena's "ends in" countdown. */
function tickCountdown(t) {
  const el = t.parts.status.querySelector('.countdown');
  const end = t.view && arenaEnd(t.view);
  if (!el || !end) return;
  const left = Math.max(0, end - Date.now());
  el.textContent = left ? `Ends in ${format(left)}.` : 'Time is up: the games still running finish.';
}

/** Your points, rank and streak in a running arena. */
function arenaPoints(me) {
  const streak = me.tiebreaks?.streak ?? 0;
  const fire = me.tiebreaks?.fire;
  return h('p', { class: 'you-arena', dataset: { score: String(me.score), streak: String(streak) } },
    `You have ${scoreText(me.score)} point${me.score === 1 ? '' : 's'} (${ordinal(me.rank)})`,
    streak ? ` · ${streak} win${streak === 1 ? '' : 's'} in a row` : null,
    fire ? [' ', h('span', { class: 'badge fire', title: 'Two wins in a row: a win scores 4, a draw 2' }, 'on fire')] : null,
    '.');
}

/** Your arena game: one click to it (berserk is offered there). */
function arenaGame(t) {
  const g = t.arenaGame;
  if (!g) return h('p', { class: 'your-game muted' }, 'Waiting for an opponent…');
  const seat = g.players.x.id === api.me().id ? 'x' : 'o';
  const opponent = g.players[seat === 'x' ? 'o' : 'x'];
  const berserk = g.time_control?.kind === 'clock' ? ' Before your first move you may go berserk there.' : '';
  return h('div', { class: 'your-game', dataset: { match: g.id } },
    h('p', {}, `You play ${seat.toUpperCase()} against ${opponent.username}.${berserk}`),
    h('a', { class: 'button primary', href: `#/match/${g.id}` }, 'Go to your game'));
}

function joinForm(t) {
  const v = t.view;
  const form = h('form', { class: 'stack', 'aria-label': 'Join the tournament' },
    v.private ? field('Entry code', h('input', { name: 'entry_code', required: true, maxlength: 32, autocomplete: 'off', spellcheck: 'false' })) : null,
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, 'Join'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const code = String(new FormData(form).get('entry_code') ?? '').trim();
    formError(form, null);
    try {
      await api.post(`/tournaments/${api.seg(t.id)}/join`, code ? { entry_code: code } : {});
      await refresh(t);
    } catch (err) {
      if (err.code === 'forbidden' && v.private) formError(form, { title: 'Not allowed', detail: err.detail || 'check the entry code' });
      else formError(form, err);
    }
  });
  return form;
}

/**
 * A button that asks again before it acts: `label`, then `question` with
 * `yes` and "No". `act` is the API call; the page is re-read after it.
 */
function confirmed(t, key, label, question, yes, act, cls = 'secondary') {
  if (t.confirm !== key) {
    return h('button', { type: 'button', class: cls, onclick: () => { t.confirm = key; render(t); } }, label);
  }
  return h('div', { class: 'actions' },
    h('span', { class: 'confirm' }, question),
    h('button', {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        t.confirm = null;
        try {
          await act();
          await refresh(t);
        } catch (err) {
          showError(err);
          render(t);
        }
      },
    }, yes),
    h('button', { type: 'button', onclick: () => { t.confirm = null; render(t); } }, 'No'));
}

function renderDirector(t) {
  const v = t.view;
  const box = t.parts.director;
  box.hidden = !isDirector(t) || !['registering', 'running'].includes(v.status);
  if (box.hidden) return;
  const items = [h('h2', {}, 'Director')];
  if (v.status === 'registering') {
    items.push(h('p', { class: 'muted' }, `Start it once at least two players have joined (${v.players} so far).`),
      h('button', {
        type: 'button',
        class: 'primary',
        onclick: async () => {
          try {
            await apply(t, await api.post(`/tournaments/${api.seg(t.id)}/start`));
          } catch (err) {
            showError(err);
          }
        },
      }, 'Start the tournament'));
  }
  items.push(h('div', { class: 'actions' }, confirmed(t, 'cancel', 'Cancel the tournament', 'Cancel it for everyone?', 'Yes, cancel it',
    async () => apply(t, await api.post(`/tournaments/${api.seg(t.id)}/cancel`)))));
  items.push(h('p', { class: 'muted' }, 'Remove a player from the standings.'));
  replace(box, items);
}

function renderStandings(t) {
  const v = t.view;
  const me = api.me();
  const removable = isDirector(t) && ['registering', 'running'].includes(v.status);
  const arena = v.kind === 'arena';
  const head = h('tr', {},
    h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col' }, 'Score'),
    arena ? h('th', { scope: 'col' }, 'Performance') : h('th', { scope: 'col', title: 'Buchholz: the sum of the opponents\' scores' }, 'Buchholz'),
    arena ? null : h('th', { scope: 'col', class: 'wide', title: 'Sonneborn-Berger: the scores of the opponents beaten, plus half of those drawn' }, 'S-B'),
    h('th', { scope: 'col', class: 'wide' }, 'W / D / L'),
    h('th', { scope: 'col', class: 'wide' }, 'Rating'),
    removable ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Remove')) : null);
  const rows = t.standings.map((s) => h('tr', {
    class: `${s.player.id === me?.id ? 'me' : ''}${s.withdrawn ? ' withdrawn' : ''}`,
    dataset: { player: s.player.username, score: String(s.score) },
  },
  h('td', {}, String(s.rank)),
  h('td', {}, h('a', { href: `#/players/${encodeURIComponent(s.player.username)}` }, s.player.username),
    s.withdrawn ? h('span', { class: 'badge' }, 'withdrawn') : null,
    arena && s.tiebreaks?.fire ? h('span', { class: 'badge fire', title: 'Two wins in a row: wins score double' }, 'on fire') : null),
  h('td', { class: 'score' }, scoreText(s.score)),
  arena
    ? h('td', {}, String(Math.round(s.tiebreaks?.performance ?? 0)))
    : h('td', { class: 'buchholz' }, scoreText(s.tiebreaks?.buchholz ?? 0)),
  arena ? null : h('td', { class: 'wide sb' }, scoreText(s.tiebreaks?.sonneborn_berger ?? 0)),
  h('td', { class: 'wide' }, `${s.wins} / ${s.draws} / ${s.losses}`),
  h('td', { class: 'wide' }, String(Math.round(s.rating))),
  removable ? h('td', {}, s.withdrawn ? null : confirmed(t, `remove:${s.player.id}`, 'Remove', `Remove ${s.player.username}?`, 'Yes, remove',
    () => api.post(`/tournaments/${api.seg(t.id)}/players/${api.seg(s.player.id)}/remove`), 'secondary small')) : null));
  const title = v.status === 'finished' ? 'Final standings' : 'Standings';
  replace(t.parts.standings, h('h2', {}, title),
    t.standings.length
      ? h('div', { class: 'table-scroll' }, h('table', { class: 'standings' }, h('thead', {}, head), h('tbody', {}, rows)))
      : h('p', { class: 'muted' }, 'Nobody has joined yet.'));
}

function renderRound(t) {
  const v = t.view;
  const box = t.parts.round;
  const round = t.shown ? t.rounds.get(t.shown) : null;
  box.hidden = v.kind !== 'swiss' || !round;
  if (box.hidden) return;
  const me = api.me();
  const picker = v.round > 1
    ? h('label', { class: 'round-pick' }, 'Show ',
      h('select', {
        name: 'round',
        'aria-label': 'Round',
        onchange: async (e) => {
          t.shown = Number(e.target.value);
          t.picked = t.shown !== v.round;
          try {
            if (!t.rounds.has(t.shown) || t.shown === v.round) await refresh(t);
            else render(t);
          } catch (err) {
            showError(err);
          }
        },
      }, Array.from({ length: v.round }, (_, i) => h('option', { value: i + 1, selected: i + 1 === t.shown }, `round ${i + 1}`))))
    : null;
  const rows = round.pairings.map((g) => {
    const yours = g.x.id === me?.id || g.o.id === me?.id;
    return h('tr', { class: yours ? 'me' : '', dataset: { match: g.match_id, result: g.result ?? '' } },
      h('td', { class: 'wide' }, String(g.board)),
      h('td', {}, h('span', { class: 'mark-x' }, 'X '), g.x.username),
      h('td', {}, h('span', { class: 'mark-o' }, 'O '), g.o.username),
      // The result links to the game (one column less on a phone).
      h('td', { class: 'result-cell' }, h('a', { href: `#/match/${g.match_id}` },
        g.result ? RESULTS[g.result] : yours ? 'Your game' : 'playing: watch')));
  });
  replace(box, h('div', { class: 'round-head' }, h('h2', {}, `Round ${round.round} pairings`), picker),
    h('div', { class: 'table-scroll' }, h('table', { class: 'pairings' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'wide' }, 'Board'), h('th', { scope: 'col' }, 'X'), h('th', { scope: 'col' }, 'O'),
        h('th', { scope: 'col' }, 'Result'))),
      h('tbody', {}, rows))),
    round.bye ? h('p', { class: 'bye' }, `Bye: ${round.bye.username} (1 point)`) : null);
}

function renderExports(t) {
  const v = t.view;
  if (v.status === 'registering') {
    replace(t.parts.exports);
    return;
  }
  const link = (format, label) => h('a', {
    href: `/api/v1/tournaments/${encodeURIComponent(t.id)}/export?format=${format}`,
    download: `tournament-${t.id}.${format}`,
  }, label);
  replace(t.parts.exports, 'Export the standings and games: ', link('csv', 'CSV'), ' · ', link('ndjson', 'NDJSON'));
}
