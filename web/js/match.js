// The match screen: the board, both seats with their clocks, controller and
// presence, the move list, resign and rematch. Live from the match's event
// stream (`state` events, id = version), which also keeps the seat present
// while it is open; without it, a heartbeat every `presence.heartbeat_ms` of
// the state does. Moves are posted with the ply they answer and the measured
// round trip as `lag_ms` (credited back within the player's lag quota).
// Under a finished match, the engine analysis (js/analysis.js). A tournament
// game links back to its tournament. The actions under the board (resign,
// berserk, what follows the game) are js/match-actions.js.

import * as api from './api.js';
import { mountAnalysis } from './analysis.js';
import { breadcrumbs, renderBoard } from './board.js';
import { botBadge } from './challenges.js';
import { Clocks, format } from './clock.js';
import { LagMeter } from './lag.js';
import { follow, indicator } from './live.js';
import { depthText, h, notice, replace, showError, timeControlText } from './dom.js';
import { renderActions } from './match-actions.js';
import { describe, key, newSquare, squaresShown, viewFor, within } from './tree.js';

/** Heartbeat interval until the first state says otherwise (a third of the shortest grace). */
const HEARTBEAT_MS = 1000;
const REASONS = {
  three_in_a_row: 'three in a row',
  draw: 'no line left',
  timeout: 'on time',
  resignation: 'by resignation',
};

/** Mounts the match `id` into `root`; answers the function that unmounts it. */
export function mount(root, id, go) {
  const m = {
    id,
    go,
    state: null,
    clocks: new Clocks(),
    lag: new LagMeter(),
    moves: new Map(),
    view: [],
    manualView: false,
    pending: false,
    confirmResign: false,
    nextGame: null,
    closed: false,
    timers: [],
  };
  m.rerender = () => render(m);
  m.take = (state) => apply(m, state);
  m.el = skeleton(m);
  replace(root, m.el);

  load(m);
  m.timers.push(setInterval(() => tick(m), 100));
  scheduleHeartbeat(m);
  return () => {
    m.closed = true;
    m.stream?.close();
    m.playerEvents?.close();
    m.offPairing?.();
    m.unmountAnalysis?.();
    for (const t of m.timers) clearInterval(t);
    clearTimeout(m.heartbeatTimer);
  };
}

function skeleton(m) {
  m.parts = {
    title: h('h1', { class: 'match-title' }, 'Match'),
    meta: h('p', { class: 'match-meta' }),
    tournament: h('p', { class: 'match-tournament', hidden: true }),
    nav: h('div', { class: 'board-nav' }),
    board: h('div', { class: 'board-host' }),
    seats: h('div', { class: 'seats' }),
    status: h('p', { class: 'status', 'aria-live': 'polite', id: 'match-status' }),
    result: h('div', { class: 'result', hidden: true, role: 'status' }),
    actions: h('div', { class: 'actions' }),
    moves: h('ol', { class: 'move-list' }),
    movesCount: h('span', {}, '0'),
    live: indicator(),
    analysis: h('section', { class: 'analysis card', hidden: true, 'aria-label': 'Analysis' }),
  };
  const p = m.parts;
  return h('section', { class: 'screen match', dataset: { matchId: m.id } },
    h('header', { class: 'match-head' }, p.title, p.meta, p.tournament),
    h('div', { class: 'match-body' },
      p.seats,
      h('div', { class: 'board-area' }, p.nav, p.board),
      h('aside', { class: 'side' },
        p.status, p.result, p.actions,
        h('details', { class: 'moves', open: true },
          h('summary', {}, 'Moves (', p.movesCount, ')'), p.moves),
        h('p', { class: 'conn' }, p.live.el))),
    p.analysis);
}

async function load(m) {
  try {
    apply(m, await m.lag.timed(() => api.get(`/matches/${api.seg(m.id)}`)));
    loadMoves(m);
    connect(m);
    heartbeat(m);
  } catch (err) {
    if (m.closed) return;
    replace(m.el, h('div', { class: 'card' },
      h('h1', {}, 'This match cannot be shown'),
      h('p', {}, err.status === 404 ? 'There is no match with this link.' : err.message),
      h('p', {}, h('a', { href: '#/' }, 'Back to the lobby'))));
  }
}

async function loadMoves(m) {
  try {
    const list = await api.get(`/matches/${api.seg(m.id)}/moves`);
    for (const mv of list) m.moves.set(mv.ply, mv);
    renderMoves(m);
    if (m.state) renderBoardPart(m);
  } catch (err) {
    showError(err);
  }
}

/** Follows the match's event stream (reading the state again whenever it is lost). */
function connect(m) {
  if (m.closed) return;
  m.stream = follow({
    path: `/matches/${api.seg(m.id)}/events`,
    event: 'state',
    onData: (state) => apply(m, state),
    reread: async () => apply(m, await api.get(`/matches/${api.seg(m.id)}`)),
    // Without the stream the seat needs heartbeats: send one now.
    onError: () => heartbeat(m),
    live: m.parts.live,
  });
}

function mySeat(m) {
  const me = api.me();
  const s = m.state;
  if (!me || !s) return null;
  if (s.players.x.id === me.id) return 'x';
  if (s.players.o.id === me.id) return 'o';
  return null;
}

/** Heartbeats at the interval the match state gives. */
function scheduleHeartbeat(m) {
  clearTimeout(m.heartbeatTimer);
  if (m.closed) return;
  const every = m.state?.presence?.heartbeat_ms ?? HEARTBEAT_MS;
  m.heartbeatTimer = setTimeout(() => {
    heartbeat(m);
    scheduleHeartbeat(m);
  }, every);
}

function heartbeat(m) {
  if (m.closed || !m.state || m.state.status !== 'active' || !mySeat(m)) return;
  // An open event stream keeps the seat present by itself.
  if (m.stream?.open) return;
  m.lag.timed(() => api.post(`/matches/${api.seg(m.id)}/heartbeat`)).catch(() => {});
}

/** Takes a new state (from the stream or an answer), if it is newer. */
function apply(m, next) {
  if (!next || next.id !== m.id) return;
  const prev = m.state;
  if (prev && next.version <= prev.version) return;
  m.state = next;
  m.clocks.update(next.clocks);
  if (prev && next.ply === prev.ply + 1) {
    const address = newSquare(prev.board.cells, next.board.cells, next.depth);
    if (address && !m.moves.has(prev.ply)) m.moves.set(prev.ply, { ply: prev.ply, seat: prev.turn, address });
  } else if (prev && next.ply !== prev.ply) {
    loadMoves(m);
  }
  const seat = mySeat(m);
  const newPly = !prev || next.ply !== prev.ply;
  if (next.status === 'active' && newPly && (next.turn === seat || !seat)) {
    // Show where the side to move must play, unless the player is browsing.
    m.manualView = false;
    m.view = viewFor(next.next.board ?? [], next.depth);
  } else if (!prev) {
    m.view = viewFor(next.next.board ?? lastMove(m) ?? [], next.depth);
  }
  if (prev?.status === 'active' && next.status === 'finished') m.confirmResign = false;
  render(m);
  // The next tournament game was paired before this one's end arrived: go now.
  if (prev?.status === 'active' && next.status === 'finished' && next.tournament && seat && m.nextGame && !m.closed) {
    notice('Your next game.');
    m.go(`#/match/${m.nextGame}`);
  }
}

function lastMove(m) {
  if (!m.state || m.state.ply === 0) return null;
  return m.moves.get(m.state.ply - 1)?.address ?? null;
}

function canPlay(m) {
  const s = m.state;
  return s.status === 'active' && s.turn === mySeat(m) && !m.pending;
}

async function play(m, address) {
  if (!canPlay(m)) return;
  m.pending = true;
  renderBoardPart(m);
  try {
    const move = { ply: m.state.ply, address, lag_ms: m.lag.lagMs() };
    const next = await m.lag.timed(() => api.post(`/matches/${api.seg(m.id)}/moves`, move));
    m.pending = false;
    apply(m, next);
  } catch (err) {
    m.pending = false;
    if (err.code === 'stale_ply' || err.code === 'not_your_turn' || err.code === 'match_over') {
      notice(err.code === 'match_over' ? 'The match is over.' : 'The board changed; here it is now.');
      try { apply(m, await api.get(`/matches/${api.seg(m.id)}`)); } catch (e) { showError(e); }
    } else {
      showError(err);
    }
  }
  render(m);
}

function browse(m, address) {
  m.view = address;
  m.manualView = true;
  renderBoardPart(m);
}

// ---------------------------------------------------------------- rendering

function render(m) {
  const s = m.state;
  if (!s) return;
  const seat = mySeat(m);
  const el = m.el;
  el.dataset.ply = String(s.ply);
  el.dataset.status = s.status;
  el.dataset.turn = s.turn ?? '';
  el.dataset.mySeat = seat ?? '';
  el.dataset.depth = String(s.depth);

  const mode = { practice: 'Practice', casual: 'Casual', ranked: 'Ranked', tournament: 'Tournament' }[s.mode] ?? s.mode;
  m.parts.title.textContent = `${mode}: ${s.players.x.username} vs ${s.players.o.username}`;
  const room = s.room_code ? ` · room ${s.room_code}` : '';
  const ladder = s.ladder ? ` · ${s.ladder}` : '';
  m.parts.meta.textContent = `${depthText(s.depth)} (depth ${s.depth}) · ${timeControlText(s.time_control)}${s.rated ? ' · rated' : ''}${ladder}${room}`;
  m.parts.tournament.hidden = !s.tournament;
  if (s.tournament) {
    replace(m.parts.tournament, h('a', { href: `#/tournaments/${encodeURIComponent(s.tournament.id)}` },
      s.tournament.round ? `Tournament — round ${s.tournament.round}` : 'Tournament'));
  }

  renderSeats(m, seat);
  renderStatus(m, seat);
  renderBoardPart(m);
  renderResult(m, seat);
  renderActions(m, seat);
  renderMoves(m);
  if (s.status === 'finished' && !m.unmountAnalysis) {
    m.parts.analysis.hidden = false;
    m.unmountAnalysis = mountAnalysis(m.parts.analysis, s);
  }
  tick(m);
  document.title = s.status === 'active' && s.turn === seat ? 'Your move · uttt' : 'uttt';
}

function renderSeats(m, mine) {
  const s = m.state;
  const cards = ['x', 'o'].map((seat) => {
    const p = s.players[seat];
    const turn = s.status === 'active' && s.turn === seat;
    const cpu = p.controller === 'cpu';
    const controller = cpu ? (p.id ? 'CPU playing for them' : 'CPU') : 'human';
    return h('div', {
      class: `seat seat-${seat}${turn ? ' turn' : ''}${seat === mine ? ' me' : ''}`,
      dataset: { seat, controller: p.controller, connected: String(p.connected) },
      'aria-label': `${seat.toUpperCase()}: ${p.username}${p.bot ? ' (bot)' : ''}${seat === mine ? ' (you)' : ''}, ${controller}, ${p.connected ? 'connected' : 'away'}${turn ? ', to move' : ''}`,
    },
    h('span', { class: 'seat-mark', 'aria-hidden': 'true' }, seat.toUpperCase()),
    h('span', { class: 'seat-who' },
      h('span', { class: 'seat-name' }, p.username, botBadge(p), seat === mine ? h('em', {}, ' (you)') : null),
      h('span', { class: 'seat-info' },
        h('span', { class: `controller controller-${p.controller}` }, controller),
        h('span', { class: `presence ${p.connected ? 'on' : 'off'}` }, p.connected ? 'online' : 'away'),
        // On the second line: a long name would hide it behind its ellipsis.
        seat === mine && m.berserk ? h('span', { class: 'badge berserk', title: 'Your clock was halved: a win scores a point more' }, 'berserk') : null)),
    h('span', { class: 'clock', dataset: { clock: seat } }, '–'));
  });
  replace(m.parts.seats, cards);
}

function renderStatus(m, seat) {
  const s = m.state;
  let text;
  if (s.status !== 'active') {
    text = 'The match is over.';
  } else if (s.turn === seat) {
    const target = s.next.board ?? [];
    text = target.length === 0 ? 'Your move: play anywhere open.' : `Your move: play in board ${describe(target)}.`;
  } else {
    const p = s.players[s.turn];
    const who = seat ? (p.controller === 'cpu' ? 'The CPU is thinking' : `Waiting for ${p.username}`) : `${s.turn.toUpperCase()} to move`;
    text = `${who}…`;
  }
  m.parts.status.textContent = text;
  m.parts.status.dataset.myTurn = String(s.status === 'active' && s.turn === seat);
}

function renderBoardPart(m) {
  const s = m.state;
  if (!s) return;
  const target = s.status === 'active' ? s.next.board ?? [] : null;
  const board = renderBoard({
    depth: s.depth,
    cells: s.board.cells,
    boards: s.board.boards,
    view: m.view,
    target,
    legal: s.next.legal,
    canPlay: canPlay(m),
    lastMove: lastMove(m),
    onPlay: (address) => play(m, address),
    onBrowse: (address) => browse(m, address),
  });
  replace(m.parts.board, board);

  const nav = [];
  if (s.depth > 2) nav.push(breadcrumbs(m.view, (a) => browse(m, a)));
  if (target && canPlay(m)) {
    const seen = within(target, m.view) || within(m.view, target);
    const playable = squaresShown(m.view, s.depth);
    if (!seen || (!playable && m.view.length < Math.min(target.length, s.depth - 2))) {
      const go = viewFor(target, s.depth);
      nav.push(h('button', { type: 'button', class: 'link go-target', onclick: () => browse(m, go) },
        `Go to board ${describe(target)}`));
    } else if (!playable) {
      nav.push(h('span', { class: 'hint' }, 'Choose a highlighted board to play in.'));
    }
  }
  replace(m.parts.nav, nav);
}

function renderResult(m, seat) {
  const s = m.state;
  const box = m.parts.result;
  if (s.status !== 'finished' || !s.result) {
    box.hidden = true;
    return;
  }
  const r = s.result;
  const reason = REASONS[r.reason] ?? r.reason;
  let headline;
  if (!r.winner) headline = 'Draw';
  else if (seat) headline = r.winner === seat ? 'You won' : 'You lost';
  else headline = `${r.winner.toUpperCase()} wins`;
  const lines = [h('strong', { class: 'result-headline' }, headline),
    h('span', {}, r.winner ? ` — ${s.players[r.winner].username} (${r.winner.toUpperCase()}) wins ${reason}.` : ' — the board is full.')];
  if (r.rating_changes) {
    for (const side of ['x', 'o']) {
      const c = r.rating_changes[side];
      if (!c) continue;
      const diff = Math.round(c.after - c.before);
      lines.push(h('span', { class: 'rating-change' },
        `${s.players[side].username}: ${Math.round(c.before)} → ${Math.round(c.after)} (${diff >= 0 ? '+' : ''}${diff})`));
    }
  }
  box.hidden = false;
  box.className = `result result-${!r.winner ? 'draw' : seat && r.winner === seat ? 'won' : seat ? 'lost' : 'over'}`;
  replace(box, lines);
}

function renderMoves(m) {
  const list = [...m.moves.values()].sort((a, b) => a.ply - b.ply);
  m.parts.movesCount.textContent = String(list.length);
  replace(m.parts.moves, list.map((mv) => h('li', { dataset: { ply: String(mv.ply) } },
    h('span', { class: 'mv-no' }, `${mv.ply + 1}.`), ' ',
    h('span', { class: `mv-seat mark-${mv.seat}` }, mv.seat.toUpperCase()), ' ', key(mv.address))));
  m.parts.moves.scrollTop = m.parts.moves.scrollHeight;
}

function tick(m) {
  if (!m.state) return;
  for (const el of m.parts.seats.querySelectorAll('[data-clock]')) {
    const seat = el.dataset.clock;
    const left = m.clocks.left(seat);
    el.textContent = format(left);
    el.classList.toggle('low', left !== null && left < 10_000 && m.state.clocks.running === seat);
    el.classList.toggle('running', m.state.clocks.running === seat);
  }
}
