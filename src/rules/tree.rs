//! The board tree of one fixed depth, as bit sets in a complete 9-ary heap.
//!
//! Boards are stored breadth first: the root is board 0 and the children of
//! board `i` are `9i+1 ..= 9i+9`, so the boards of one level are contiguous and
//! in address order. The boards whose positions are squares (the leaf level,
//! addresses of length d-1) start at `(9^(d-1)-1)/8`, and the square with flat
//! index `f` lies in board `(9^(d-1)-1)/8 + f/9`, at position `f % 9`.
//!
//! Each board keeps three 9-bit masks: the positions X holds, the positions O
//! holds (a square with their mark, or a child board they won) and the
//! positions that are decided (held, or a drawn child board). A board's own
//! status lives in its parent's masks; the root's is the match status.
//!
//! Over 400 lines: the board tree is the hot path of the rules core; its bit
//! operations stay together so they inline and read as one data structure.

use super::game::Game;
use super::lines::{COMPLETING, COUNT, FULL, POSITIONS, has_line};
use super::{Address, BoardStatus, Depth, IllegalMove, MoveList, Outcome, Seat, Square, Status};

/// The masks of one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Node {
    /// Positions held by X (index 0) and by O (index 1).
    held: [u16; 2],
    /// Positions decided: held by either seat, or a drawn child board.
    done: u16,
}

impl Node {
    const EMPTY: Node = Node {
        held: [0; 2],
        done: 0,
    };

    /// The seat holding `position`: its mark, or the child board it won.
    fn holder(self, position: usize) -> Option<Seat> {
        let bit = 1 << position;
        if self.held[0] & bit != 0 {
            Some(Seat::X)
        } else if self.held[1] & bit != 0 {
            Some(Seat::O)
        } else {
            None
        }
    }

    /// The status of the child board at `position`.
    fn child_status(self, position: usize) -> BoardStatus {
        match self.holder(position) {
            Some(seat) => BoardStatus::Won(seat),
            None if self.done & (1 << position) != 0 => BoardStatus::Drawn,
            None => BoardStatus::Open,
        }
    }
}

/// A match of depth `D` with `BOARDS = (9^D-1)/8` boards, in fixed arrays.
///
/// Use the aliases [`Tree1`] … [`Tree4`]; other parameters fail to compile.
/// A [`Tree2`] is a 70-byte `Copy` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tree<const D: usize, const BOARDS: usize> {
    nodes: [Node; BOARDS],
    status: Status,
    /// Heap index of the relaxed target board; unused once the match is over.
    target: u16,
    ply: u16,
    last: Option<Square>,
}

/// Plain tic-tac-toe.
pub type Tree1 = Tree<1, 1>;
/// Ultimate Tic-Tac-Toe: 81 squares, 10 boards.
pub type Tree2 = Tree<2, 10>;
/// Depth 3: 729 squares, 91 boards.
pub type Tree3 = Tree<3, 91>;
/// Depth 4: 6,561 squares, 820 boards.
pub type Tree4 = Tree<4, 820>;

impl<const D: usize, const BOARDS: usize> Tree<D, BOARDS> {
    /// 9^D.
    const SQUARES: usize = 9usize.pow(D as u32);
    /// The number of leaf-level boards, 9^(D-1).
    const LEAVES: usize = Self::SQUARES / 9;
    /// The heap index of the first leaf-level board.
    const LEAF_START: usize = (Self::LEAVES - 1) / 8;
    /// Evaluated by `new`: only the four real shapes compile.
    const SHAPE: () = assert!(
        D >= 1 && D <= 4 && BOARDS == (Self::SQUARES - 1) / 8,
        "Tree<D, BOARDS> needs D in 1..=4 and BOARDS = (9^D - 1) / 8"
    );

    /// The empty tree: X to move, the target is the root.
    #[must_use]
    pub const fn new() -> Self {
        let () = Self::SHAPE;
        Tree {
            nodes: [Node::EMPTY; BOARDS],
            status: Status::Ongoing,
            target: 0,
            ply: 0,
            last: None,
        }
    }

    /// The relaxed target board; `None` once the match is over.
    #[must_use]
    pub fn target(&self) -> Option<Address> {
        (!self.status.is_over()).then(|| Address::from_heap_index(usize::from(self.target)))
    }

    /// The status of `board`; `None` unless it names a board of this depth
    /// (fewer than `D` coordinates).
    #[must_use]
    pub fn board_status(&self, board: &Address) -> Option<BoardStatus> {
        if board.len() >= D {
            return None;
        }
        let index = board.heap_index();
        Some(match index.checked_sub(1) {
            None => self.status.into(),
            Some(below) => self.nodes[below / 9].child_status(below % 9),
        })
    }

    /// Appends the 9^D cells, by flat index: `'.'` empty, `'x'`, `'o'`.
    pub fn write_cells(&self, out: &mut String) {
        out.reserve(Self::SQUARES);
        for node in &self.nodes[Self::LEAF_START..] {
            out.extend((0..9).map(|position| node.holder(position).map_or('.', Seat::as_char)));
        }
    }

    /// Every decided board with its status, in address order (the root first).
    #[must_use]
    pub fn decided_boards(&self) -> Vec<(Address, BoardStatus)> {
        let mut boards = Vec::new();
        let root = BoardStatus::from(self.status);
        if root.is_decided() {
            boards.push((Address::ROOT, root));
        }
        self.push_decided_below(0, Address::ROOT, &mut boards);
        boards
    }

    fn push_decided_below(
        &self,
        board: usize,
        address: Address,
        out: &mut Vec<(Address, BoardStatus)>,
    ) {
        if board >= Self::LEAF_START {
            return;
        }
        let node = self.nodes[board];
        for position in 0..9u8 {
            let Some(child) = address.child(position) else {
                return;
            };
            let status = node.child_status(usize::from(position));
            if status.is_decided() {
                out.push((child, status));
            }
            self.push_decided_below(9 * board + 1 + usize::from(position), child, out);
        }
    }

    /// The outcome of the move just played at `square`, which decided
    /// `decided` boards (the return value of `play_unchecked`).
    pub(crate) fn outcome(&self, square: Square, decided: usize) -> Outcome {
        if decided == 0 {
            return Outcome::new(self.status, square, &[]);
        }
        let mut chain = [(Address::ROOT, BoardStatus::Open); Address::MAX_LEN];
        let mut board = square.to_address(Self::DEPTH).parent();
        let mut len = 0;
        while let Some(address) = board {
            if len == decided {
                break;
            }
            let status = self.board_status(&address).unwrap_or(BoardStatus::Open);
            chain[len] = (address, status);
            len += 1;
            board = address.parent();
        }
        chain[..len].reverse();
        Outcome::new(self.status, square, &chain[..len])
    }

    /// The deepest playable board on the path to leaf-level board number
    /// `leaf` (0..9^(D-1)): walk down from the root until a decided board.
    #[inline]
    fn relax(&self, leaf: usize) -> u16 {
        let mut board = 0;
        let mut span = Self::LEAVES;
        for _ in 1..D {
            span /= 9;
            let position = (leaf / span) % 9;
            if self.nodes[board].done & (1 << position) != 0 {
                break;
            }
            board = 9 * board + 1 + position;
        }
        // At most 819.
        board as u16
    }

    /// Calls `visit(first, open)` for every playable leaf-level board under
    /// the target, as [`Self::visit_open`] does, but inline (that one
    /// recurses, so it is a call) when the target is a leaf-level board or
    /// the parent of some: every target at depth 2, most at depth 3.
    #[inline]
    fn visit_target(&self, visit: &mut impl FnMut(usize, u16)) {
        let target = usize::from(self.target);
        let first_child = 9 * target + 1;
        if target >= Self::LEAF_START {
            visit(
                (target - Self::LEAF_START) * 9,
                !self.nodes[target].done & FULL,
            );
        } else if first_child >= Self::LEAF_START {
            let mut open = !self.nodes[target].done & FULL;
            while open != 0 {
                let child = first_child + open.trailing_zeros() as usize;
                visit(
                    (child - Self::LEAF_START) * 9,
                    !self.nodes[child].done & FULL,
                );
                open &= open - 1;
            }
        } else {
            self.visit_open(target, visit);
        }
    }

    /// Calls `visit(first, open)` for every playable leaf-level board under
    /// `board` (itself included), in address order: `first` is the flat index
    /// of its square 0, `open` the mask of its empty squares.
    #[inline]
    fn visit_open(&self, board: usize, visit: &mut impl FnMut(usize, u16)) {
        let mut open = !self.nodes[board].done & FULL;
        if board >= Self::LEAF_START {
            visit((board - Self::LEAF_START) * 9, open);
        } else {
            while open != 0 {
                self.visit_open(9 * board + 1 + open.trailing_zeros() as usize, visit);
                open &= open - 1;
            }
        }
    }
}

impl<const D: usize, const BOARDS: usize> Tree<D, BOARDS> {
    /// At depth 2 with a free choice: the first square (board, position)
    /// that wins one of the `deciding` boards for `seat`.
    #[inline]
    fn deciding_square(&self, deciding: u16, seat: usize) -> Option<(usize, usize)> {
        let mut boards = deciding & !self.nodes[0].done & FULL;
        while boards != 0 {
            let b = boards.trailing_zeros() as usize;
            boards &= boards - 1;
            let node = self.nodes[1 + b];
            let wins = COMPLETING[usize::from(node.held[seat])] & !node.done & FULL;
            if wins != 0 {
                return Some((b, wins.trailing_zeros() as usize));
            }
        }
        None
    }

    /// [`Game::play_out`] at depth 2, the playout of the classic game and
    /// the CPU's hot loop: the same moves as the generic loop, but the board
    /// and the position of each move stay apart (no flat index to divide),
    /// the side to move and the target live in registers, and the ply, the
    /// last move and the status are written once at the end.
    #[inline]
    fn play_out_two(&mut self, decisive: bool, pick: &mut impl FnMut(usize) -> usize) -> Status {
        debug_assert_eq!(D, 2);
        if self.status.is_over() {
            return self.status;
        }
        // Boards 1..=9 are the small boards, board 0 the big one.
        let mut seat = usize::from(self.ply & 1);
        // The small board sent to (0..9), or 9 for a free choice.
        let mut target = if self.target == 0 {
            9
        } else {
            usize::from(self.target) - 1
        };
        let mut plies = 0u16;
        let mut last = (0, 0);
        let _ = last;
        let status = loop {
            // The boards whose win would win the match for the side to move.
            let deciding = if decisive {
                COMPLETING[usize::from(self.nodes[0].held[seat])]
            } else {
                0
            };
            let (board, position) = if target < 9 {
                let node = self.nodes[1 + target];
                let open = !node.done & FULL;
                let wins = COMPLETING[usize::from(node.held[seat])] & open;
                if deciding & (1 << target) != 0 && wins != 0 {
                    (target, wins.trailing_zeros() as usize)
                } else {
                    let open = usize::from(open);
                    let n = pick(usize::from(COUNT[open]));
                    (target, usize::from(POSITIONS[open][n.min(8)]))
                }
            } else if let Some(win) = self.deciding_square(deciding, seat) {
                win
            } else {
                // A free choice: every open square of every open board, in
                // flat order.
                let mut boards = !self.nodes[0].done & FULL;
                let mut count = 0;
                let mut rest = boards;
                while rest != 0 {
                    let b = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    count += usize::from(COUNT[usize::from(!self.nodes[1 + b].done & FULL)]);
                }
                let mut left = pick(count);
                let mut chosen = (0, 0);
                while boards != 0 {
                    let b = boards.trailing_zeros() as usize;
                    boards &= boards - 1;
                    let open = usize::from(!self.nodes[1 + b].done & FULL);
                    let here = usize::from(COUNT[open]);
                    if left < here {
                        chosen = (b, usize::from(POSITIONS[open][left]));
                        break;
                    }
                    left -= here;
                }
                chosen
            };
            plies += 1;
            last = (board, position);
            let node = &mut self.nodes[1 + board];
            let bit = 1 << position;
            node.held[seat] |= bit;
            node.done |= bit;
            let won = has_line(node.held[seat]);
            if won || node.done == FULL {
                let root = &mut self.nodes[0];
                let board_bit = 1 << board;
                root.done |= board_bit;
                if won {
                    root.held[seat] |= board_bit;
                    if has_line(root.held[seat]) {
                        break Status::Won(if seat == 0 { Seat::X } else { Seat::O });
                    }
                }
                if root.done == FULL {
                    break Status::Drawn;
                }
            }
            target = if self.nodes[0].done & (1 << position) != 0 {
                9
            } else {
                position
            };
            seat ^= 1;
        };
        self.status = status;
        // As after the generic loop: the target the last move was played
        // in, never updated once the match is over.
        self.target = if target < 9 { 1 + target as u16 } else { 0 };
        self.ply += plies;
        if plies > 0 {
            // Below 81, so it fits in a u16.
            self.last = Some(Square::from_raw((last.0 * 9 + last.1) as u16));
        }
        status
    }
}

impl<const D: usize, const BOARDS: usize> Default for Tree<D, BOARDS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const D: usize, const BOARDS: usize> Game for Tree<D, BOARDS> {
    const DEPTH: Depth = match Depth::new(D as u8) {
        Ok(depth) => depth,
        Err(_) => panic!("Tree<D, BOARDS> needs D in 1..=4"),
    };

    fn start() -> Self {
        Self::new()
    }

    fn ply(&self) -> u32 {
        u32::from(self.ply)
    }

    fn status(&self) -> Status {
        self.status
    }

    fn last_move(&self) -> Option<Square> {
        self.last
    }

    fn cell(&self, square: Square) -> Option<Seat> {
        let flat = square.index();
        self.nodes
            .get(Self::LEAF_START + flat / 9)?
            .holder(flat % 9)
    }

    fn check_square(&self, square: Square) -> Result<(), IllegalMove> {
        let flat = square.index();
        if flat >= Self::SQUARES {
            return Err(IllegalMove::BadAddress);
        }
        if self.status.is_over() {
            return Err(IllegalMove::BoardClosed);
        }
        let target = usize::from(self.target);
        let mut board = 0;
        let mut inside = target == 0;
        let mut span = Self::SQUARES;
        for _ in 1..D {
            span /= 9;
            let position = (flat / span) % 9;
            if self.nodes[board].done & (1 << position) != 0 {
                return Err(IllegalMove::BoardClosed);
            }
            board = 9 * board + 1 + position;
            inside |= board == target;
        }
        if !inside {
            return Err(IllegalMove::WrongBoard);
        }
        if self.nodes[board].done & (1 << (flat % 9)) != 0 {
            return Err(IllegalMove::CellOccupied);
        }
        Ok(())
    }

    fn for_each_legal_move(&self, mut visit: impl FnMut(Square)) {
        if self.status.is_over() {
            return;
        }
        self.visit_target(&mut |first, mut open| {
            while open != 0 {
                // Below 9^4, so it fits in a u16.
                visit(Square::from_raw(
                    (first + open.trailing_zeros() as usize) as u16,
                ));
                open &= open - 1;
            }
        });
    }

    fn legal_moves(&self, buf: &mut MoveList) {
        buf.clear();
        if !self.status.is_over() {
            self.visit_target(&mut |first, open| {
                buf.push_positions(first, open);
            });
        }
    }

    fn count_legal_moves(&self) -> usize {
        let mut count = 0;
        if !self.status.is_over() {
            self.visit_target(&mut |_, open| {
                count += usize::from(COUNT[usize::from(open)]);
            });
        }
        count
    }

    #[inline]
    fn nth_legal_move(&self, n: usize) -> Option<Square> {
        if self.status.is_over() {
            return None;
        }
        let mut left = n;
        let mut found = None;
        self.visit_target(&mut |first, open| {
            let count = usize::from(COUNT[usize::from(open)]);
            if found.is_none() {
                if left < count {
                    let position = usize::from(POSITIONS[usize::from(open)][left]);
                    // Below 9^4, so it fits in a u16.
                    found = Some(Square::from_raw((first + position) as u16));
                } else {
                    left -= count;
                }
            }
        });
        found
    }

    #[inline]
    fn pick_legal_move(&self, pick: impl FnOnce(usize) -> usize) -> Option<Square> {
        if self.status.is_over() {
            return None;
        }
        let target = usize::from(self.target);
        if target < Self::LEAF_START {
            let count = self.count_legal_moves();
            return self.nth_legal_move(pick(count));
        }
        // The usual case past depth 1: one board's empty squares, read once.
        let open = usize::from(!self.nodes[target].done & FULL);
        let n = pick(usize::from(COUNT[open]));
        if n >= usize::from(COUNT[open]) {
            return None;
        }
        let first = (target - Self::LEAF_START) * 9;
        // Below 9^4, so it fits in a u16.
        Some(Square::from_raw(
            (first + usize::from(POSITIONS[open][n])) as u16,
        ))
    }

    #[inline]
    fn pick_greedy_move(
        &self,
        careful: bool,
        mut pick: impl FnMut(usize) -> usize,
    ) -> Option<Square> {
        if self.status.is_over() {
            return None;
        }
        let seat = usize::from(self.ply & 1);
        let target = usize::from(self.target);
        let nth = |mask: u16, n: usize| usize::from(POSITIONS[usize::from(mask)][n]);
        if target < Self::LEAF_START {
            // A free choice: a board win anywhere, else any move.
            let mut wins = 0;
            self.visit_target(&mut |first, open| {
                let held = self.nodes[Self::LEAF_START + first / 9].held[seat];
                wins += usize::from(COUNT[usize::from(COMPLETING[usize::from(held)] & open)]);
            });
            if wins == 0 {
                return self.pick_legal_move(pick);
            }
            let mut left = pick(wins);
            let mut found = None;
            self.visit_target(&mut |first, open| {
                let held = self.nodes[Self::LEAF_START + first / 9].held[seat];
                let mask = COMPLETING[usize::from(held)] & open;
                let count = usize::from(COUNT[usize::from(mask)]);
                if found.is_none() {
                    if left < count {
                        // Below 9^4, so it fits in a u16.
                        found = Some(Square::from_raw((first + nth(mask, left)) as u16));
                    } else {
                        left -= count;
                    }
                }
            });
            return found;
        }
        let node = self.nodes[target];
        let open = !node.done & FULL;
        let first = (target - Self::LEAF_START) * 9;
        let choose = |mask: u16, pick: &mut dyn FnMut(usize) -> usize| {
            let n = pick(usize::from(COUNT[usize::from(mask)])).min(8);
            // Below 9^4, so it fits in a u16.
            Some(Square::from_raw((first + nth(mask, n)) as u16))
        };
        let wins = COMPLETING[usize::from(node.held[seat])] & open;
        if wins != 0 {
            return choose(wins, &mut pick);
        }
        let mut good = 0;
        let mut rest = open;
        while rest != 0 {
            let position = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let leaf = (first + position) % Self::LEAVES;
            let next = usize::from(self.relax(leaf));
            // Filling the last square closes the board itself: the sent-to
            // board may be this one, so a lone square is never "good".
            let own_closes = open.count_ones() == 1 && next == target;
            if next != Self::LEAF_START + leaf || own_closes {
                continue;
            }
            if careful {
                let sent = self.nodes[next];
                let sent_open = !sent.done & FULL & !(u16::from(next == target) << position);
                if COMPLETING[usize::from(sent.held[1 - seat])] & sent_open != 0 {
                    continue;
                }
            }
            good |= 1 << position;
        }
        choose(if good == 0 { open } else { good }, &mut pick)
    }

    #[inline]
    fn play_out(&mut self, decisive: bool, mut pick: impl FnMut(usize) -> usize) -> Status {
        if D == 2 {
            return self.play_out_two(decisive, &mut pick);
        }
        super::game::play_out_step_by_step(self, decisive, pick)
    }

    fn match_winning_move(&self) -> Option<Square> {
        if self.status.is_over() {
            return None;
        }
        let seat = usize::from(self.ply & 1);
        let mut found = None;
        // A board win wins the match when each board on the way up
        // completes a line of its parent; the way up is the same for every
        // square of the board, so it is walked once per board with a win.
        self.visit_target(&mut |first, open| {
            let wins =
                COMPLETING[usize::from(self.nodes[Self::LEAF_START + first / 9].held[seat])] & open;
            if found.is_some() || wins == 0 {
                return;
            }
            let mut board = Self::LEAF_START + first / 9;
            while let Some(below) = board.checked_sub(1) {
                board = below / 9;
                if !has_line(self.nodes[board].held[seat] | 1 << (below % 9)) {
                    return;
                }
            }
            // Below 9^4, so it fits in a u16.
            found = Some(Square::from_raw(
                (first + wins.trailing_zeros() as usize) as u16,
            ));
        });
        found
    }

    fn wins_board(&self, square: Square, seat: Seat) -> bool {
        let flat = square.index();
        let Some(node) = self.nodes.get(Self::LEAF_START + flat / 9) else {
            return false;
        };
        let bit = 1 << (flat % 9);
        !self.status.is_over()
            && self.relax(flat / 9) == (Self::LEAF_START + flat / 9) as u16
            && node.done & bit == 0
            && has_line(node.held[seat.index()] | bit)
    }

    fn can_win_a_board(&self) -> bool {
        if self.status.is_over() {
            return false;
        }
        let seat = usize::from(self.ply & 1);
        let mut found = false;
        self.visit_target(&mut |first, open| {
            let held = self.nodes[Self::LEAF_START + first / 9].held[seat];
            found |= COMPLETING[usize::from(held)] & open != 0;
        });
        found
    }

    fn free_choice(&self) -> bool {
        !self.status.is_over() && usize::from(self.target) < Self::LEAF_START
    }

    #[inline]
    fn would_win_match(&self, square: Square, seat: Seat) -> bool {
        let flat = square.index();
        if flat >= Self::SQUARES || self.status.is_over() {
            return false;
        }
        let held = seat.index();
        let mut board = Self::LEAF_START + flat / 9;
        let mut bit = 1 << (flat % 9);
        loop {
            let node = &self.nodes[board];
            // An occupied square or a decided board on the path: not playable.
            if node.done & bit != 0 || !has_line(node.held[held] | bit) {
                return false;
            }
            let Some(below) = board.checked_sub(1) else {
                return true;
            };
            board = below / 9;
            bit = 1 << (below % 9);
        }
    }

    #[inline]
    fn play_unchecked(&mut self, square: Square) -> usize {
        debug_assert_eq!(
            self.check_square(square),
            Ok(()),
            "play_unchecked({square:?})"
        );
        let flat = square.index();
        let seat = usize::from(self.ply & 1);
        let mut board = Self::LEAF_START + flat / 9;
        let bit = 1 << (flat % 9);
        let node = &mut self.nodes[board];
        node.held[seat] |= bit;
        node.done |= bit;
        let mut won = has_line(node.held[seat]);
        let mut closed = won || node.done == FULL;
        let mut decided = 0;
        // A board that closes marks its position in the parent, which may close
        // in turn: a win or a draw cascades upward in the same move.
        while closed {
            decided += 1;
            let Some(below) = board.checked_sub(1) else {
                self.status = match (won, seat) {
                    (true, 0) => Status::Won(Seat::X),
                    (true, _) => Status::Won(Seat::O),
                    (false, _) => Status::Drawn,
                };
                break;
            };
            board = below / 9;
            let bit = 1 << (below % 9);
            let parent = &mut self.nodes[board];
            if won {
                parent.held[seat] |= bit;
                won = has_line(parent.held[seat]);
            }
            parent.done |= bit;
            closed = won || parent.done == FULL;
        }
        self.ply += 1;
        self.last = Some(square);
        if !self.status.is_over() {
            // The opponent is sent to the leaf-level board [a2, …, ad].
            self.target = self.relax(flat % Self::LEAVES);
        }
        decided
    }
}
