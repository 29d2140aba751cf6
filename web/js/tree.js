// The board tree in the words of RULES.md: addresses, flat indices, decided
// boards. Pure functions, no DOM, so Node can import them too.

/** The names of the nine positions of a board, 0 top-left to 8 bottom-right. */
export const POSITIONS = [
  'top-left', 'top', 'top-right',
  'left', 'centre', 'right',
  'bottom-left', 'bottom', 'bottom-right',
];

/** An address as the API's `boards` key: coordinates joined by dots, root = "". */
export function key(address) {
  return address.join('.');
}

/** The address of a `boards` key. */
export function parseKey(text) {
  return text === '' ? [] : text.split('.').map(Number);
}

/** Flat index of a square in `cells`: a1·9^(d-1) + … + ad. */
export function flatIndex(address) {
  return address.reduce((index, a) => index * 9 + a, 0);
}

/** The square address of a flat index at `depth`. */
export function addressOf(index, depth) {
  const address = new Array(depth);
  for (let i = depth - 1; i >= 0; i -= 1) {
    address[i] = index % 9;
    index = Math.floor(index / 9);
  }
  return address;
}

/** The mark on a square: 'x', 'o' or '' for an empty one. */
export function markAt(cells, address) {
  const c = cells[flatIndex(address)];
  return c === 'x' || c === 'o' ? c : '';
}

/** Whether `address` lies in (or is) the board at `prefix`. */
export function within(address, prefix) {
  if (prefix.length > address.length) return false;
  return prefix.every((a, i) => address[i] === a);
}

/** The decided board closest to the root among `address` and its ancestors, or null. */
export function closedBy(boards, address) {
  for (let n = 0; n <= address.length; n += 1) {
    const k = key(address.slice(0, n));
    if (boards[k]) return { address: address.slice(0, n), outcome: boards[k] };
  }
  return null;
}

/**
 * The board to show so that `target` can be played on squares: its ancestor
 * `depth - 2` levels down (a nine-by-nine grid of squares), or the target
 * itself when it lies higher up (the player then browses into a sub-board).
 */
export function viewFor(target, depth) {
  if (!target) return [];
  const leafView = Math.max(0, depth - 2);
  return target.length >= leafView ? target.slice(0, leafView) : target.slice();
}

/** How many levels of boards the view at `view` shows down to the squares. */
export function levelsBelow(view, depth) {
  return depth - view.length;
}

/** Whether squares can be played from the view at `view` (at most a nine-by-nine grid). */
export function squaresShown(view, depth) {
  return levelsBelow(view, depth) <= 2;
}

/** The human name of an address: "4.2 (centre, top-right)". */
export function describe(address) {
  if (address.length === 0) return 'the whole board';
  return `${key(address)} (${address.map((a) => POSITIONS[a]).join(', ')})`;
}

/** The square that changed from one `cells` string to the next, or null. */
export function newSquare(before, after, depth) {
  if (!before || before.length !== after.length) return null;
  for (let i = 0; i < after.length; i += 1) {
    if (before[i] !== after[i]) return addressOf(i, depth);
  }
  return null;
}

const LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/** The decided boards of `cells` at `depth`, as the API's `boards` map ('x', 'o' or 'draw' by key). */
export function boardsOf(cells, depth) {
  const boards = {};
  // The status of the board at `address` with `levels` levels below it.
  const status = (address, levels) => {
    const children = [];
    for (let pos = 0; pos < 9; pos += 1) {
      const child = [...address, pos];
      if (levels === 1) {
        const c = cells[flatIndex(child)];
        children.push(c === 'x' || c === 'o' ? c : null);
      } else {
        children.push(status(child, levels - 1));
      }
    }
    let outcome = null;
    for (const [a, b, c] of LINES) {
      const s = children[a];
      if ((s === 'x' || s === 'o') && children[b] === s && children[c] === s) outcome = s;
    }
    if (!outcome && children.every((c) => c !== null)) outcome = 'draw';
    if (outcome) boards[key(address)] = outcome;
    return outcome;
  };
  status([], depth);
  return boards;
}

/** The `cells` string after the first `ply` moves (addresses, X first) at `depth`. */
export function positionAt(moves, ply, depth) {
  const cells = new Array(9 ** depth).fill('.');
  moves.slice(0, ply).forEach((address, i) => {
    cells[flatIndex(address)] = i % 2 === 0 ? 'x' : 'o';
  });
  return cells.join('');
}
