// The engine analysis under a finished match (API.md "Analysis"): an
// "Analyse" button for its players (and admins), the progress while the
// server's worker runs, then X's winning chance over the plies as an SVG
// graph, the moves with their judgements, and stepping through the game on
// a board that marks the CPU's best move.
//
// The pure parts are unit-tested under Node: `positionAt` and `boardsOf` in
// tree.js, `graphGeometry` in chart.js; `mountAnalysis` makes the panel.

import * as api from './api.js';
import { renderBoard } from './board.js';
import { graphGeometry, svgElement } from './chart.js';
import { h, replace, showError } from './dom.js';
import { boardsOf, key, positionAt, viewFor } from './tree.js';

/** How often the panel reads the analysis while it runs. */
const POLL_MS = 1000;
export const JUDGEMENT_TEXT = {
  best: 'best',
  good: 'good',
  inaccuracy: 'inaccuracy ?!',
  mistake: 'mistake ?',
  blunder: 'blunder ??',
};

function percent(v) {
  return `${Math.round(v * 100)}%`;
}

/** Mounts the analysis panel of the finished match `state` into `root`; answers the function that unmounts it. */
export function mountAnalysis(root, state) {
  const a = { root, state, data: null, step: 0, timer: null, closed: false };
  const me = api.me();
  const seat = me && (state.players.x.id === me.id || state.players.o.id === me.id);
  a.canAsk = Boolean(seat || me?.role === 'admin');
  load(a);
  return () => {
    a.closed = true;
    clearTimeout(a.timer);
  };
}

async function load(a) {
  try {
    show(a, await api.get(`/matches/${api.seg(a.state.id)}/analysis`));
  } catch (err) {
    if (err.status !== 404) showError(err);
    renderAsk(a);
  }
}

function renderAsk(a) {
  const items = [h('h2', {}, 'Analysis')];
  if (a.canAsk) {
    items.push(h('p', { class: 'hint' }, 'The CPU evaluates every position of the match and judges each move.'),
      h('button', { type: 'button', class: 'primary analyse', onclick: () => ask(a) }, 'Analyse'));
  } else {
    items.push(h('p', { class: 'hint' }, 'Nobody has asked for an analysis of this match yet.'));
  }
  replace(a.root, items);
  a.root.dataset.analysis = 'none';
}

async function ask(a) {
  try {
    const answer = await api.post(`/matches/${api.seg(a.state.id)}/analysis`);
    if (answer.plies) show(a, answer);
    else poll(a);
  } catch (err) {
    showError(err);
  }
}

function poll(a) {
  clearTimeout(a.timer);
  if (a.closed) return;
  a.timer = setTimeout(async () => {
    try {
      show(a, await api.get(`/matches/${api.seg(a.state.id)}/analysis`));
    } catch (err) {
      if (err.status !== 404) showError(err);
      poll(a);
    }
  }, POLL_MS);
}

function show(a, data) {
  if (a.closed) return;
  a.data = data;
  a.root.dataset.analysis = data.status;
  if (data.status !== 'done') {
    const { plies_done: done, plies_total: total } = data.progress;
    replace(a.root, h('h2', {}, 'Analysis'),
      h('p', { class: 'analysis-progress', role: 'status' },
        data.status === 'queued' ? 'Waiting for the analysis to start…' : `Analysing: ${done} of ${total} moves…`),
      h('progress', { max: String(Math.max(total, 1)), value: String(done) }));
    poll(a);
    return;
  }
  a.step = Math.min(a.step, data.plies.length);
  renderDone(a);
}

function renderDone(a) {
  const { data, state } = a;
  const plies = data.plies;
  const head = h('h2', {}, 'Analysis');
  const accuracy = h('p', { class: 'accuracy' },
    `Accuracy: ${state.players.x.username} (X) `, h('strong', { dataset: { accuracy: 'x' } }, String(data.accuracy.x)),
    ` · ${state.players.o.username} (O) `, h('strong', { dataset: { accuracy: 'o' } }, String(data.accuracy.o)));
  if (!plies.length) {
    replace(a.root, head, accuracy, h('p', { class: 'hint' }, 'No move was played.'));
    return;
  }
  const board = h('div', { class: 'analysis-board' });
  const caption = h('p', { class: 'analysis-step', 'aria-live': 'polite' });
  const nav = h('div', { class: 'analysis-nav' },
    h('button', { type: 'button', class: 'step-first', 'aria-label': 'Start', onclick: () => go(a, 0) }, '«'),
    h('button', { type: 'button', class: 'step-prev', 'aria-label': 'Previous move', onclick: () => go(a, a.step - 1) }, '◀'),
    h('button', { type: 'button', class: 'step-next', 'aria-label': 'Next move', onclick: () => go(a, a.step + 1) }, '▶'),
    h('button', { type: 'button', class: 'step-last', 'aria-label': 'End', onclick: () => go(a, plies.length) }, '»'));
  const list = h('ol', { class: 'analysis-moves' }, plies.map((p) => h('li', {
    dataset: { ply: String(p.ply), judgement: p.judgement },
  }, h('button', { type: 'button', class: 'link', onclick: () => go(a, p.ply) },
    h('span', { class: 'mv-no' }, `${p.ply + 1}.`), ' ',
    h('span', { class: `mv-seat mark-${p.seat}` }, p.seat.toUpperCase()), ' ', key(p.address), ' ',
    h('span', { class: `judgement judgement-${p.judgement}` }, JUDGEMENT_TEXT[p.judgement] ?? p.judgement),
    p.judgement === 'best' ? null : h('span', { class: 'hint' }, ` (best ${key(p.best)}, −${percent(p.loss)})`)))));
  a.parts = { board, caption, list, graph: graph(a) };
  replace(a.root, head, accuracy, a.parts.graph,
    h('div', { class: 'analysis-body' },
      h('div', { class: 'analysis-view' }, nav, caption, board), list));
  go(a, a.step);
}

function graph(a) {
  const plies = a.data.plies;
  const g = graphGeometry(plies);
  const title = 'X\'s winning chance before each move (top: X wins, bottom: O wins)';
  a.marker = svgElement('line', { class: 'graph-step', x1: 0, x2: 0, y1: 0, y2: g.height });
  return svgElement('svg', { viewBox: `0 0 ${g.width} ${g.height}`, class: 'analysis-graph', role: 'img', 'aria-label': title },
    svgElement('title', {}, title),
    svgElement('path', { class: 'graph-area', d: g.area }),
    svgElement('line', { class: 'graph-middle', x1: g.pad, x2: g.width - g.pad, y1: g.middle, y2: g.middle }),
    svgElement('path', { class: 'graph-line', d: g.line }),
    a.marker,
    ...g.dots.map(([cx, cy], i) => {
      const p = plies[i];
      const dot = svgElement('circle', {
        class: `graph-dot${p ? ` judgement-${p.judgement}` : ''}`, cx, cy, r: p && p.judgement !== 'best' && p.judgement !== 'good' ? 5 : 3,
      }, svgElement('title', {}, p ? `${p.ply + 1}. ${p.seat.toUpperCase()} ${key(p.address)}: X ${percent(p.win_x)}, ${p.judgement}` : 'end'));
      dot.addEventListener('click', () => go(a, i));
      return dot;
    }));
}

/** Shows the position before move `step` (after the last one at the end) with the best move marked. */
function go(a, step) {
  const { data, state, parts } = a;
  const plies = data.plies;
  a.step = Math.max(0, Math.min(step, plies.length));
  const addresses = plies.map((p) => p.address);
  const cells = positionAt(addresses, a.step, state.depth);
  const ply = plies[a.step];
  const last = a.step > 0 ? plies[a.step - 1].address : null;
  const best = ply ? ply.best : null;
  replace(parts.board, renderBoard({
    depth: state.depth,
    cells,
    boards: boardsOf(cells, state.depth),
    view: viewFor(best ?? last ?? [], state.depth),
    target: null,
    legal: [],
    canPlay: false,
    lastMove: last,
    marked: best,
    onPlay: () => {},
    onBrowse: () => {},
  }));
  parts.board.dataset.step = String(a.step);
  parts.caption.textContent = ply
    ? `Before move ${a.step + 1} (${ply.seat.toUpperCase()} to play): X's chance ${percent(ply.win_x)}; best ${key(ply.best)}, played ${key(ply.address)} — ${ply.judgement}.`
    : `After the last move (${plies.length} moves).`;
  for (const li of parts.list.children) li.classList.toggle('current', Number(li.dataset.ply) === a.step);
  const g = graphGeometry(plies);
  a.marker.setAttribute('x1', String(g.x(a.step)));
  a.marker.setAttribute('x2', String(g.x(a.step)));
}
