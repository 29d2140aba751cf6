//! Monte-Carlo tree search (UCT), monomorphised over each depth's tree.
//!
//! Every iteration copies the root position, walks down the tree by the UCB1
//! rule replaying the moves on the copy, adds one node, finishes the match
//! with a random playout and credits the result to every node on the path.
//! Nodes live in one flat vector (20 bytes each, children contiguous), so an
//! iteration allocates nothing once the vector has room.

use crate::rules::{Game, MoveList, Seat, Square, Status};

use super::budget::{Budget, Stopwatch};
use super::playout::random_playout;
use super::{Rng, tactics};

/// The most nodes one search keeps (40 MiB, about a million iterations at
/// depth 2, as many as level 5 runs in its second); past it, leaves are no
/// longer expanded and the search carries on with playouts from them.
const MAX_NODES: usize = 1 << 21;

/// How a search plays: its budget and how it explores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Where the search stops.
    pub budget: Budget,
    /// The UCB1 exploration constant `c` in `q + c·√(ln N / n)` (rewards in 0..=1).
    pub exploration: f32,
    /// One-move tactics: at the root, take a win and avoid moves that allow
    /// one; inside the tree, a node where the mover can win the match has
    /// that move as its only child.
    pub tactics: bool,
}

/// The exploration constant of the levels, chosen by selfplay at depth 2:
/// at 3,000 iterations a move, c = 0.5 scored 63% against c = 1.0 (and
/// 0.7 scored 62%, 1.4 scored 48%; 0.35 and 0.25 lost to 0.5); at 30,000,
/// 0.7 and 0.5 were even. Random playouts are noisy, so exploiting early pays.
pub const EXPLORATION: f32 = 0.6;

impl Settings {
    /// The levels' search with `budget`.
    #[must_use]
    pub const fn with_budget(budget: Budget) -> Settings {
        Settings {
            budget,
            exploration: EXPLORATION,
            tactics: true,
        }
    }

    /// Textbook UCT with `iterations`: `c = √2`, random playouts, no tactics.
    #[must_use]
    pub const fn plain_uct(iterations: u32) -> Settings {
        Settings {
            budget: Budget::iterations(iterations),
            exploration: std::f32::consts::SQRT_2,
            tactics: false,
        }
    }
}

/// Why the search chose its move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The match is over: no move.
    Over,
    /// Only one move was worth playing (the only legal one, or the only one
    /// that does not lose at once): played without searching.
    OnlyMove,
    /// The move wins the match at once.
    Win,
    /// The most visited move of the search.
    Search,
}

/// The result of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// The chosen move; `None` only when the match is over.
    pub square: Option<Square>,
    /// Iterations run.
    pub iterations: u32,
    /// Nodes in the tree at the end (the root and its children included).
    pub nodes: usize,
    /// How the move was chosen.
    pub decision: Decision,
}

/// One node: the move that led here, its statistics and its children.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// Index of the first child; the children are contiguous.
    first: u32,
    visits: u32,
    /// Sum of the results for the player who made `square`: 1 win, ½ draw.
    score: f32,
    /// `1/√visits`, kept up to date by the update so that choosing a child
    /// costs no division or square root per child.
    rsqrt: f32,
    square: Square,
    /// 0 until expanded.
    count: u16,
}

impl Node {
    fn leaf(square: Square) -> Node {
        Node {
            first: 0,
            visits: 0,
            score: 0.0,
            rsqrt: 0.0,
            square,
            count: 0,
        }
    }
}

/// How often the stopwatch is read, in iterations: iterations at depth 1
/// take well under a microsecond, at depth 4 tens of microseconds.
fn check_every<G: Game>() -> u32 {
    1 << (2 * (4 - u32::from(G::DEPTH.get())))
}

/// Searches `game` within `settings` and reports the move to play.
///
/// Deterministic for a given seed when the iteration bound is what stops it.
pub fn search<G: Game>(game: &G, settings: &Settings, seed: u64, watch: &dyn Stopwatch) -> Report {
    let mut moves = MoveList::new(G::DEPTH);
    game.legal_moves(&mut moves);
    let decided = |square, decision| Report {
        square,
        iterations: 0,
        nodes: 0,
        decision,
    };
    match moves.as_slice() {
        [] => return decided(None, Decision::Over),
        &[only] => return decided(Some(only), Decision::OnlyMove),
        _ => {}
    }
    let mut candidates = moves.as_slice().to_vec();
    if settings.tactics {
        if let Some(win) = tactics::winning_move(game, &candidates) {
            return decided(Some(win), Decision::Win);
        }
        let safe = tactics::safe_moves(game, &candidates);
        // When every move loses at once, search them all anyway: the
        // opponent may still miss the win.
        if !safe.is_empty() {
            candidates = safe;
        }
        if let &[only] = candidates.as_slice() {
            return decided(Some(only), Decision::OnlyMove);
        }
    }
    let mut tree = Tree::new(game.clone(), candidates[0], settings, seed, moves);
    tree.expand_with(0, &candidates);
    let iterations = tree.run(&settings.budget, watch);
    Report {
        square: Some(tree.best()),
        iterations,
        nodes: tree.nodes.len(),
        decision: Decision::Search,
    }
}

/// The state of one search.
struct Tree<G> {
    root: G,
    me: Seat,
    nodes: Vec<Node>,
    /// The nodes of the current iteration, root first.
    path: Vec<u32>,
    moves: MoveList,
    rng: Rng,
    exploration: f32,
    tactics: bool,
}

impl<G: Game> Tree<G> {
    /// A tree of one node; `placeholder` stands as the root's move, never read.
    fn new(root: G, placeholder: Square, settings: &Settings, seed: u64, moves: MoveList) -> Self {
        let mut nodes = Vec::with_capacity(4_096);
        nodes.push(Node::leaf(placeholder));
        Tree {
            me: root.turn(),
            root,
            nodes,
            path: Vec::with_capacity(G::DEPTH.squares() + 1),
            moves,
            rng: Rng::new(seed),
            exploration: settings.exploration,
            tactics: settings.tactics,
        }
    }

    /// Runs iterations until the budget is spent; returns how many ran.
    fn run(&mut self, budget: &Budget, watch: &dyn Stopwatch) -> u32 {
        let every = check_every::<G>();
        let mut done = 0;
        while done < budget.iterations {
            if done.is_multiple_of(every) && watch.elapsed() >= budget.time {
                break;
            }
            self.iterate();
            done += 1;
        }
        done
    }

    fn iterate(&mut self) {
        let mut game = self.root.clone();
        self.path.clear();
        self.path.push(0);
        let mut node = 0;
        let status = loop {
            let status = game.status();
            if status.is_over() {
                break status;
            }
            let here = self.nodes[node];
            // A leaf's first visit is a playout; its second expands it.
            if here.count == 0 && (here.visits == 0 || !self.expand(node, &game)) {
                break random_playout(&mut game, &mut self.rng);
            }
            node = self.select(node);
            game.play_unchecked(self.nodes[node].square);
            // Below MAX_NODES, so it fits in a u32.
            self.path.push(node as u32);
        };
        self.update(status);
    }

    /// Gives `node` its children: the legal moves of `game`, or only a move
    /// that wins the match when tactics are on. False when the tree is full.
    fn expand(&mut self, node: usize, game: &G) -> bool {
        game.legal_moves(&mut self.moves);
        let moves = std::mem::take(&mut self.moves);
        let mut list = moves.as_slice();
        if self.tactics {
            let me = game.turn();
            if let Some(win) = list.iter().position(|&sq| game.would_win_match(sq, me)) {
                list = &list[win..=win];
            }
        }
        let expanded = self.nodes.len() + list.len() <= MAX_NODES;
        if expanded {
            self.expand_with(node, list);
        }
        self.moves = moves;
        expanded
    }

    /// Appends children for `squares`, in random order so that the unvisited
    /// ones are tried in random order.
    fn expand_with(&mut self, node: usize, squares: &[Square]) {
        let first = self.nodes.len();
        self.nodes.extend(squares.iter().map(|&sq| Node::leaf(sq)));
        let children = &mut self.nodes[first..];
        for i in (1..children.len()).rev() {
            children.swap(i, self.rng.below(i + 1));
        }
        let parent = &mut self.nodes[node];
        // Below MAX_NODES and 9^4 respectively.
        parent.first = first as u32;
        parent.count = squares.len() as u16;
    }

    /// The child of `node` with the highest UCB1 value; an unvisited child first.
    #[inline]
    fn select(&self, node: usize) -> usize {
        let parent = self.nodes[node];
        let first = parent.first as usize;
        let children = &self.nodes[first..first + usize::from(parent.count)];
        let spread = self.exploration * (parent.visits as f32).ln().sqrt();
        let mut best = 0;
        let mut best_value = f32::NEG_INFINITY;
        for (i, child) in children.iter().enumerate() {
            if child.visits == 0 {
                return first + i;
            }
            // score/n + spread/√n, as 1/√n · (score · 1/√n + spread).
            let value = child.rsqrt * (child.score * child.rsqrt + spread);
            if value > best_value {
                best_value = value;
                best = i;
            }
        }
        first + best
    }

    /// Credits the result to the path: each node scores for the player who
    /// moved into it, the root's side on odd steps.
    fn update(&mut self, status: Status) {
        let (mine, theirs) = match status.winner() {
            Some(seat) if seat == self.me => (1.0, 0.0),
            Some(_) => (0.0, 1.0),
            None => (0.5, 0.5),
        };
        for (step, &index) in self.path.iter().enumerate() {
            let node = &mut self.nodes[index as usize];
            node.visits += 1;
            node.score += if step % 2 == 1 { mine } else { theirs };
            node.rsqrt = (node.visits as f32).sqrt().recip();
        }
    }

    /// The root's most visited child, the better scoring on a tie; the first
    /// (a random one, the children being shuffled) when nothing was visited.
    fn best(&self) -> Square {
        let root = self.nodes[0];
        let first = root.first as usize;
        let children = &self.nodes[first..first + usize::from(root.count)];
        let mut best = children[0];
        for child in &children[1..] {
            if child.visits > best.visits
                || (child.visits == best.visits && child.score > best.score)
            {
                best = *child;
            }
        }
        best.square
    }
}
