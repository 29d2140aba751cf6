// The match screen's actions (js/match.js renders the rest): resign,
// berserk in an arena game before your first move, and what follows a
// finished game: a room's rematch or next game, a tournament's next game
// (taken at once when `tournament_pairing` arrives), practice or queue
// again. `m` is the match screen's record; `m.rerender()` draws it again
// and `m.take(state)` applies a newer state.

import * as api from './api.js';
import { onEvent } from './challenges.js';
import { h, notice, replace, showError } from './dom.js';
import { startPractice, startQueue } from './lobby.js';

/** Draws the actions of `seat` (null: a spectator). */
export function renderActions(m, seat) {
  const s = m.state;
  const items = [];
  if (s.tournament && seat) watchTournament(m);
  if (s.status === 'active' && seat) {
    if (berserkAllowed(m, seat)) {
      items.push(h('button', {
        type: 'button',
        class: 'secondary berserk',
        disabled: m.berserking,
        title: 'Halve your clock before your first move: a win scores one point more',
        onclick: () => berserk(m),
      }, 'Berserk'));
    }
    if (m.confirmResign) {
      items.push(h('span', { class: 'confirm' }, 'Resign this match?'),
        h('button', { type: 'button', class: 'danger', onclick: () => resign(m) }, 'Yes, resign'),
        h('button', { type: 'button', onclick: () => { m.confirmResign = false; m.rerender(); } }, 'Keep playing'));
    } else {
      items.push(h('button', { type: 'button', class: 'secondary', onclick: () => { m.confirmResign = true; m.rerender(); } }, 'Resign'));
    }
  }
  if (s.status === 'finished') {
    if (s.room_code && seat) {
      if (m.nextGame) {
        items.push(h('button', { type: 'button', class: 'primary', onclick: () => m.go(`#/match/${m.nextGame}`) }, 'Go to the next game'));
      } else {
        items.push(h('button', { type: 'button', class: 'primary', onclick: () => rematch(m) }, 'Rematch'));
      }
      watchRoom(m);
    } else if (s.tournament && seat) {
      items.push(m.nextGame
        ? h('button', { type: 'button', class: 'primary', onclick: () => m.go(`#/match/${m.nextGame}`) }, 'Go to your next game')
        : h('a', { class: 'button primary', href: `#/tournaments/${encodeURIComponent(s.tournament.id)}` }, 'Back to the tournament'));
    } else if (s.mode === 'practice' && seat) {
      items.push(h('button', { type: 'button', class: 'primary', onclick: () => playAgain(m, seat) }, 'Play again'));
    } else if (s.mode === 'ranked' && s.ladder && seat) {
      items.push(h('button', { type: 'button', class: 'primary', onclick: () => startQueue(s.ladder, m.go) }, 'Queue again'));
    }
    items.push(h('a', { class: 'button secondary', href: '#/' }, 'Lobby'));
  }
  replace(m.parts.actions, items);
}

/**
 * Whether `seat` may go berserk (RULES.md, Arena): an arena game (paired
 * without a round) on a clock, before the seat's first move, once. With half
 * the clock or less left it is not offered: it would lose on time at once
 * (and it shows a reloaded page that the player already went berserk).
 */
function berserkAllowed(m, seat) {
  const s = m.state;
  const tc = s.time_control;
  if (!s.tournament || s.tournament.round || tc?.kind !== 'clock' || m.berserk || m.berserkRefused) return false;
  // X moves at plies 0, 2, …; O at 1, 3, …
  const moved = s.ply > (seat === 'o' ? 1 : 0);
  return !moved && m.clocks.left(seat) > tc.initial_ms / 2;
}

async function berserk(m) {
  if (m.berserking) return;
  m.berserking = true;
  m.rerender();
  try {
    const state = await api.post(`/tournaments/${api.seg(m.state.tournament.id)}/berserk`, { match_id: m.id });
    m.berserk = true;
    notice('Berserk: your clock is halved, and a win scores a point more.');
    m.take(state);
  } catch (err) {
    // Not allowed any more (a move came first, or the arena ended): say why, once.
    m.berserkRefused = true;
    if (err.code === 'berserk_not_allowed') notice(err.detail || 'Berserk is no longer allowed.');
    else showError(err);
  }
  m.berserking = false;
  m.rerender();
}

async function resign(m) {
  m.confirmResign = false;
  try {
    m.take(await api.post(`/matches/${api.seg(m.id)}/resign`));
  } catch (err) {
    showError(err);
  }
  m.rerender();
}

async function rematch(m) {
  try {
    const room = await api.post(`/rooms/${api.seg(m.state.room_code)}/rematch`, { after_match_id: m.id });
    if (room.match_id) m.go(`#/match/${room.match_id}`);
  } catch (err) {
    if (err.code === 'match_in_progress' && err.problem.match_id) m.go(`#/match/${err.problem.match_id}`);
    else showError(err);
  }
}

/**
 * After a room's game: notices when the other player starts the next one
 * (`match_found` on /me/events, and the room read every few seconds).
 */
function watchRoom(m) {
  if (m.roomWatch) return;
  const found = (matchId) => {
    if (m.closed || !matchId || matchId === m.id || m.nextGame === matchId) return;
    m.nextGame = matchId;
    notice('Your opponent started the next game.');
    m.rerender();
  };
  api.events('/me/events').then((es) => {
    if (m.closed) { es.close(); return; }
    m.playerEvents = es;
    es.addEventListener('match_found', (e) => {
      try {
        const data = JSON.parse(e.data);
        if (data.room_code === m.state.room_code) found(data.match_id);
      } catch {
        // The poll finds it.
      }
    });
  }).catch(() => {});
  const poll = async () => {
    try {
      const room = await api.get(`/rooms/${api.seg(m.state.room_code)}`);
      found(room.match_id);
    } catch {
      // Try again at the next round.
    }
  };
  m.roomWatch = setInterval(poll, 5000);
  m.timers.push(m.roomWatch);
  poll();
}

/**
 * A seated player's tournament game: once it is over, the pairing of their
 * next game (`tournament_pairing`) takes them there.
 */
function watchTournament(m) {
  if (m.offPairing) return;
  m.offPairing = onEvent('tournament_pairing', (d) => {
    if (m.closed || d.tournament_id !== m.state.tournament?.id || d.match_id === m.id) return;
    m.nextGame = d.match_id;
    if (m.state.status !== 'finished') {
      m.rerender();
      return;
    }
    notice(d.round ? `Round ${d.round}: your next game.` : 'Your next game.');
    m.go(`#/match/${d.match_id}`);
  });
}

async function playAgain(m, seat) {
  const s = m.state;
  const cpu = s.players[seat === 'x' ? 'o' : 'x'];
  const level = Number(/level (\d)/.exec(cpu.username)?.[1] ?? 3);
  await startPractice({ depth: s.depth, cpu_level: level, time_control: s.time_control, seat }, m.go);
}
