//! A second, deliberately simple implementation of RULES.md, to check the fast
//! one against: a flat array of cells, every board status recomputed from the
//! cells by recursion, addresses as vectors, no bit tricks and no caching
//! between positions. Only the result types are shared with `uttt::rules`.

use std::collections::HashMap;

use uttt::rules::{BoardStatus, IllegalMove, Seat, Status};

/// The rows, columns and diagonals of a board, positions numbered row by row.
const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// What one position of a board is, as far as lines are concerned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    Empty,
    By(Seat),
    /// A drawn child board: decided, but held by nobody.
    Nobody,
}

/// A match: the cells and the last move.
#[derive(Clone, Debug)]
pub struct Simple {
    pub depth: usize,
    cells: Vec<Option<Seat>>,
    last: Option<Vec<u8>>,
    pub ply: usize,
}

/// Everything derived from the cells of one position.
pub struct Analysis {
    /// The status of every board, by address.
    pub boards: HashMap<Vec<u8>, BoardStatus>,
    pub status: Status,
    pub target: Option<Vec<u8>>,
    /// Flat indices of the legal moves, increasing.
    pub legal: Vec<usize>,
}

/// The flat index of a square's coordinates.
pub fn flat(coords: &[u8]) -> usize {
    coords
        .iter()
        .fold(0, |index, &c| index * 9 + usize::from(c))
}

/// The coordinates of flat index `index` at `depth`.
pub fn coords_of(depth: usize, mut index: usize) -> Vec<u8> {
    let mut coords = vec![0; depth];
    for slot in coords.iter_mut().rev() {
        *slot = (index % 9) as u8;
        index /= 9;
    }
    coords
}

impl Simple {
    pub fn new(depth: usize) -> Simple {
        Simple {
            depth,
            cells: vec![None; 9usize.pow(depth as u32)],
            last: None,
            ply: 0,
        }
    }

    pub fn turn(&self) -> Seat {
        if self.ply.is_multiple_of(2) {
            Seat::X
        } else {
            Seat::O
        }
    }

    pub fn cell(&self, index: usize) -> Option<Seat> {
        self.cells[index]
    }

    pub fn analyse(&self) -> Analysis {
        let mut boards = HashMap::new();
        let root = self.board_status(&mut Vec::new(), &mut boards);
        let status = match root {
            BoardStatus::Open => Status::Ongoing,
            BoardStatus::Won(seat) => Status::Won(seat),
            BoardStatus::Drawn => Status::Drawn,
        };
        let mut analysis = Analysis {
            boards,
            status,
            target: None,
            legal: Vec::new(),
        };
        if status == Status::Ongoing {
            // The first move may go anywhere; later, the opponent is sent to the
            // last move without its first coordinate, relaxed outward until playable.
            let mut target = match &self.last {
                None => Vec::new(),
                Some(last) => last[1..].to_vec(),
            };
            while !analysis.playable(&target) {
                target.pop();
            }
            let mut legal = Vec::new();
            self.collect(&analysis, &mut target.clone(), &mut legal);
            legal.sort_unstable();
            analysis.target = Some(target);
            analysis.legal = legal;
        }
        analysis
    }

    /// The status of the board at `path`, and of every board below it into
    /// `boards`. `path` is back as it was on return.
    fn board_status(
        &self,
        path: &mut Vec<u8>,
        boards: &mut HashMap<Vec<u8>, BoardStatus>,
    ) -> BoardStatus {
        let mut held = [Held::Empty; 9];
        for (position, slot) in held.iter_mut().enumerate() {
            path.push(position as u8);
            *slot = if path.len() == self.depth {
                match self.cells[flat(path)] {
                    Some(seat) => Held::By(seat),
                    None => Held::Empty,
                }
            } else {
                match self.board_status(path, boards) {
                    BoardStatus::Won(seat) => Held::By(seat),
                    BoardStatus::Drawn => Held::Nobody,
                    BoardStatus::Open => Held::Empty,
                }
            };
            path.pop();
        }
        let mut status = BoardStatus::Open;
        if held.iter().all(|&h| h != Held::Empty) {
            status = BoardStatus::Drawn;
        }
        for seat in [Seat::X, Seat::O] {
            if LINES
                .iter()
                .any(|line| line.iter().all(|&p| held[p] == Held::By(seat)))
            {
                status = BoardStatus::Won(seat);
            }
        }
        boards.insert(path.clone(), status);
        status
    }

    /// Every empty square under the board at `path` whose path crosses no
    /// decided board. `path` is back as it was on return.
    fn collect(&self, analysis: &Analysis, path: &mut Vec<u8>, out: &mut Vec<usize>) {
        if analysis.boards[path.as_slice()] != BoardStatus::Open {
            return;
        }
        for position in 0..9 {
            path.push(position);
            if path.len() == self.depth {
                if self.cells[flat(path)].is_none() {
                    out.push(flat(path));
                }
            } else {
                self.collect(analysis, path, out);
            }
            path.pop();
        }
    }

    /// Why the side to move may not play `coords`, in the order RULES.md's
    /// reasons are checked.
    pub fn reason(&self, analysis: &Analysis, coords: &[u8]) -> Result<(), IllegalMove> {
        if coords.len() != self.depth || coords.iter().any(|&c| c > 8) {
            return Err(IllegalMove::BadAddress);
        }
        for len in 0..self.depth {
            if analysis.boards[&coords[..len]] != BoardStatus::Open {
                return Err(IllegalMove::BoardClosed);
            }
        }
        let target = analysis.target.as_ref().expect("an open root has a target");
        if !coords.starts_with(target) {
            return Err(IllegalMove::WrongBoard);
        }
        if self.cells[flat(coords)].is_some() {
            return Err(IllegalMove::CellOccupied);
        }
        Ok(())
    }

    pub fn play(&mut self, coords: &[u8]) -> Result<(), IllegalMove> {
        self.play_checked(&self.analyse(), coords)
    }

    /// Plays flat index `index`, given this position's analysis.
    pub fn play_analysed(&mut self, analysis: &Analysis, index: usize) -> Result<(), IllegalMove> {
        self.play_checked(analysis, &coords_of(self.depth, index))
    }

    fn play_checked(&mut self, analysis: &Analysis, coords: &[u8]) -> Result<(), IllegalMove> {
        self.reason(analysis, coords)?;
        self.cells[flat(coords)] = Some(self.turn());
        self.last = Some(coords.to_vec());
        self.ply += 1;
        Ok(())
    }

    pub fn play_index(&mut self, index: usize) -> Result<(), IllegalMove> {
        self.play(&coords_of(self.depth, index))
    }

    pub fn perft(&self, plies: u32) -> u64 {
        if plies == 0 {
            return 1;
        }
        self.analyse()
            .legal
            .into_iter()
            .map(|index| {
                let mut child = self.clone();
                child.play_index(index).expect("a listed move is legal");
                child.perft(plies - 1)
            })
            .sum()
    }
}

impl Analysis {
    /// A board is playable when neither it nor any ancestor is decided.
    pub fn playable(&self, board: &[u8]) -> bool {
        (0..=board.len()).all(|len| self.boards[&board[..len]] == BoardStatus::Open)
    }
}
