// Renders a board of any depth as nested grids, from the board being viewed
// down to its squares. A view at most two levels above the squares (the
// nine-by-nine grid of the classic game) shows squares as buttons, enabled
// exactly for the legal moves; a view higher up (depth 3 and 4) shows its
// sub-boards as buttons that browse into them, with breadcrumbs back.

import { h } from './dom.js';
import { closedBy, describe, key, markAt, POSITIONS, squaresShown, within } from './tree.js';

const OUTCOME = { x: 'X', o: 'O', draw: '½' };
const OUTCOME_WORDS = { x: 'won by X', o: 'won by O', draw: 'drawn' };

/**
 * The board as elements.
 * model: {depth, cells, boards, view, target (address | null), legal (array
 * of addresses), canPlay, lastMove (address | null), marked (address |
 * null: the analysis's best move), onPlay(address), onBrowse(address)}
 */
export function renderBoard(model) {
  const { depth, view } = model;
  const ctx = {
    ...model,
    legalKeys: new Set(model.legal.map(key)),
    // Every board that holds a legal square.
    legalBoards: new Set(model.legal.flatMap((a) => a.map((_, n) => key(a.slice(0, n))))),
    targetKey: model.target ? key(model.target) : null,
    lastKey: model.lastMove ? key(model.lastMove) : null,
    markedKey: model.marked ? key(model.marked) : null,
    playable: squaresShown(view, depth),
  };
  const levels = depth - view.length;
  const frame = h('div', {
    class: `board-frame levels-${levels}`,
    dataset: { view: key(view), depth: String(depth) },
  });
  const root = boardEl(ctx, view, levels, 'view');
  // A target above the view covers all of it.
  if (model.target && within(view, model.target) && model.target.length < view.length) {
    root.classList.add('target');
  }
  frame.append(root);
  return frame;
}

/** One board: `role` is 'view' (the board viewed), 'tile' (a sub-board to browse into) or 'inner'. */
function boardEl(ctx, address, levels, role) {
  const k = key(address);
  const outcome = ctx.boards[k];
  const classes = ['board', `l${levels}`];
  if (outcome) classes.push('decided', `decided-${outcome}`);
  if (k === ctx.targetKey) classes.push('target');
  if (ctx.legalBoards.has(k) && ctx.canPlay) classes.push('has-legal');
  const closed = !outcome && closedBy(ctx.boards, address);
  if (closed) classes.push('closed');

  const tile = role === 'tile';
  const inPreview = role === 'inner' && !ctx.playable;
  let el;
  if (tile) {
    classes.push('tile');
    el = h('button', {
      type: 'button',
      class: classes.join(' '),
      'aria-label': boardLabel(ctx, address, outcome, closed, 'Browse into board'),
      dataset: { board: k },
      onclick: () => ctx.onBrowse(address),
    });
  } else {
    el = h(inPreview ? 'span' : 'div', {
      class: classes.join(' '),
      dataset: { board: k },
      role: inPreview ? null : 'group',
      'aria-label': inPreview ? null : boardLabel(ctx, address, outcome, closed, 'Board'),
    });
  }
  for (let pos = 0; pos < 9; pos += 1) {
    const child = [...address, pos];
    if (levels === 1) {
      el.append(ctx.playable ? cellButton(ctx, child) : cellPreview(ctx, child));
    } else {
      const childRole = role === 'view' && !ctx.playable ? 'tile' : 'inner';
      el.append(boardEl(ctx, child, levels - 1, childRole));
    }
  }
  if (outcome && role === 'view') {
    // The board viewed is decided (the match is over, or the player browsed
    // into a closed board): a frame says so, the squares stay readable.
    el.classList.add('view-decided');
  } else if (outcome) {
    el.append(h('span', { class: `outcome outcome-${outcome}`, 'aria-hidden': 'true' }, OUTCOME[outcome]));
  }
  return el;
}

function boardLabel(ctx, address, outcome, closed, what) {
  const name = address.length ? `${what} ${describe(address)}` : `${what}: the whole board`;
  const parts = [name];
  if (outcome) parts.push(OUTCOME_WORDS[outcome]);
  else if (closed) parts.push('closed');
  if (key(address) === ctx.targetKey) parts.push('you must play here');
  else if (ctx.canPlay && ctx.legalBoards.has(key(address))) parts.push('has legal moves');
  return parts.join(', ');
}

function cellButton(ctx, address) {
  const k = key(address);
  const mark = markAt(ctx.cells, address);
  const legal = ctx.canPlay && ctx.legalKeys.has(k);
  const classes = ['cell'];
  if (mark) classes.push(`mark-${mark}`);
  if (legal) classes.push('legal');
  if (k === ctx.lastKey) classes.push('last');
  if (k === ctx.markedKey) classes.push('best');
  const best = k === ctx.markedKey ? ', the best move' : '';
  const state = (mark ? mark.toUpperCase() : legal ? 'empty, legal move' : 'empty') + best;
  return h('button', {
    type: 'button',
    class: classes.join(' '),
    dataset: { address: k },
    'aria-label': `Square ${k}: ${state}`,
    disabled: !legal,
    onclick: legal ? () => ctx.onPlay(address) : null,
  }, mark.toUpperCase());
}

function cellPreview(ctx, address) {
  const mark = markAt(ctx.cells, address);
  const classes = ['cell', 'preview'];
  if (mark) classes.push(`mark-${mark}`);
  if (key(address) === ctx.lastKey) classes.push('last');
  if (key(address) === ctx.markedKey) classes.push('best');
  if (ctx.canPlay && ctx.legalKeys.has(key(address))) classes.push('legal');
  return h('span', { class: classes.join(' '), 'aria-hidden': 'true' }, mark.toUpperCase());
}

/**
 * Breadcrumbs from the whole board down to `view`: each ancestor a button
 * that browses back to it.
 */
export function breadcrumbs(view, onBrowse) {
  const items = [];
  for (let n = 0; n <= view.length; n += 1) {
    const address = view.slice(0, n);
    const label = n === 0 ? 'Whole board' : `${view[n - 1]} · ${POSITIONS[view[n - 1]]}`;
    const current = n === view.length;
    items.push(h('li', {},
      current
        ? h('span', { 'aria-current': 'location' }, label)
        : h('button', { type: 'button', class: 'crumb', onclick: () => onBrowse(address) }, label)));
  }
  return h('nav', { class: 'breadcrumbs', 'aria-label': 'Board position' }, h('ol', {}, items));
}
