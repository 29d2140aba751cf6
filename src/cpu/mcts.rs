//! Monte-Carlo tree search (UCT), monomorphised over each depth's tree.
//!
//! Every iteration copies the root position, walks down the tree by the UCB1
//! rule replaying the moves on the copy, adds one node, finishes the match
//! with a playout and credits the result to every node on the path.
//! Nodes live in one flat vector (24 bytes each, children contiguous), so an
//! iteration allocates nothing once the vector has room.
//!
//! With the solver on (MCTS-solver, Winands et al. 2008), a node whose match
//! is over is proven won, lost or drawn, and proofs back up: a node is lost
//! for its mover as soon as one reply wins, won once every reply loses,
//! drawn once every reply is proven and the best of them draws. Selection
//! skips proven losses, a proven node counts its exact result instead of a
//! playout, and the search stops once the root is proven. A proven win is
//! played by its shortest line, a proven loss by its longest.
//!
//! Over 400 lines: selection, expansion, the proof back-up, the choice of
//! the move and the evaluation analyses read ([`evaluate`]) all read and
//! write the same node layout, kept in one file so the invariants of that
//! layout stay in view.

use crate::rules::{Game, MoveList, Seat, Square, Status};

use super::budget::{Budget, Stopwatch};
use super::playout::{Playout, playout};
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
    /// MCTS-solver: proven wins, losses and draws back up through the tree.
    pub solver: bool,
    /// How playouts pick their moves.
    pub playout: Playout,
    /// Progressive bias: each new child starts with this many virtual
    /// visits at a prior mean from one-move knowledge (a board won, the
    /// opponent handed a board they can win or a free choice), so the
    /// first real visits go to the likelier moves; 0 turns it off.
    pub prior: u8,
}

/// The exploration constant of the levels, chosen by selfplay at depth 2:
/// at 3,000 iterations a move, c = 0.5 scored 63% against c = 1.0 (and
/// 0.7 scored 62%, 1.4 scored 48%; 0.35 and 0.25 lost to 0.5); at 30,000,
/// 0.7 and 0.5 were even. Random playouts are noisy, so exploiting early pays.
pub const EXPLORATION: f32 = 0.6;

/// Level 5's exploration constant: with decisive playouts, the prior and
/// tens of thousands of iterations a move, c = 0.8 scored 76.0% against the
/// other crate's alpha-beta where 0.6 scored 73.5% (100 games each, README
/// "Strength").
pub const STRONGEST_EXPLORATION: f32 = 0.8;

/// Level 5's virtual visits of the prior ([`Settings::prior`]).
pub const STRONGEST_PRIOR: u8 = 4;

impl Settings {
    /// Level 5's search with `budget`: the levels' search with decisive
    /// playouts, the one-move prior and [`STRONGEST_EXPLORATION`]. Levels 1–4
    /// keep [`Settings::with_budget`], so their meaning (and level 1's
    /// weakness) is unchanged.
    #[must_use]
    pub const fn strongest(budget: Budget) -> Settings {
        Settings {
            budget,
            exploration: STRONGEST_EXPLORATION,
            tactics: true,
            solver: true,
            playout: Playout::Decisive,
            prior: STRONGEST_PRIOR,
        }
    }

    /// The levels' search with `budget`.
    #[must_use]
    pub const fn with_budget(budget: Budget) -> Settings {
        Settings {
            budget,
            exploration: EXPLORATION,
            tactics: true,
            solver: true,
            playout: Playout::Random,
            prior: 0,
        }
    }

    /// The levels' search as it was before the strength work of issue 22
    /// (`c` = 0.6, one-move tactics, no solver, random playouts), kept so
    /// that new settings can be measured against it.
    #[must_use]
    pub const fn baseline(budget: Budget) -> Settings {
        Settings {
            budget,
            exploration: 0.6,
            tactics: true,
            solver: false,
            playout: Playout::Random,
            prior: 0,
        }
    }

    /// Textbook UCT with `iterations`: `c = √2`, random playouts, no tactics.
    #[must_use]
    pub const fn plain_uct(iterations: u32) -> Settings {
        Settings {
            budget: Budget::iterations(iterations),
            exploration: std::f32::consts::SQRT_2,
            tactics: false,
            solver: false,
            playout: Playout::Random,
            prior: 0,
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
    /// The search proved the result (a win played by its shortest line, a
    /// loss by its longest, or a draw) and stopped.
    Solved,
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
    /// Visits of the root carried over from the last search of the match
    /// ([`search_kept`]); 0 for a fresh tree.
    pub reused: u32,
    /// How the move was chosen.
    pub decision: Decision,
}

/// What the solver knows of a node, for the player who moved into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    Open,
    Win,
    Loss,
    Draw,
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
    proof: Proof,
    /// Plies from here to the end of the match along the proven line
    /// (saturating), once proven.
    plies: u8,
    /// Virtual visits of the prior, counted in `visits` (and their prior
    /// mean in `score`).
    prior: u8,
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
            proof: Proof::Open,
            plies: 0,
            prior: 0,
        }
    }

    /// A new child with `virtual_visits` visits at mean `mean`.
    fn with_prior(square: Square, virtual_visits: u8, mean: f32) -> Node {
        let visits = u32::from(virtual_visits);
        Node {
            visits,
            score: mean * visits as f32,
            rsqrt: if visits == 0 {
                0.0
            } else {
                (visits as f32).sqrt().recip()
            },
            prior: virtual_visits,
            ..Node::leaf(square)
        }
    }

    /// Visits that were real iterations.
    fn real_visits(&self) -> u32 {
        self.visits - u32::from(self.prior)
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
    search_kept(game, settings, seed, watch, &mut Kept::default())
}

/// A search tree kept between the moves of one match: the next search
/// starts from the subtree of the position it is asked about when that
/// position was in this tree (one or two plies below its root), so what was
/// learned about the opponent's likely reply is not thrown away.
pub struct Kept<G> {
    tree: Option<Tree<G>>,
}

impl<G> Default for Kept<G> {
    fn default() -> Self {
        Kept { tree: None }
    }
}

impl<G> Kept<G> {
    /// Forgets the tree (a new match).
    pub fn clear(&mut self) {
        self.tree = None;
    }

    /// Nodes kept from the last search.
    #[must_use]
    pub fn nodes(&self) -> usize {
        self.tree.as_ref().map_or(0, |tree| tree.nodes.len())
    }
}

/// As [`search`], starting from the subtree of `game` in `kept` when there
/// is one, and leaving this search's tree in `kept` for the next move.
///
/// Deterministic for a given seed and the same sequence of earlier searches
/// when the iteration bound is what stops it.
pub fn search_kept<G: Game>(
    game: &G,
    settings: &Settings,
    seed: u64,
    watch: &dyn Stopwatch,
    kept: &mut Kept<G>,
) -> Report {
    let mut moves = MoveList::new(G::DEPTH);
    game.legal_moves(&mut moves);
    let decided = |square, decision| Report {
        square,
        iterations: 0,
        nodes: 0,
        reused: 0,
        decision,
    };
    // Whatever is decided below, the kept tree follows the match.
    let reused = kept
        .tree
        .take()
        .and_then(|mut tree| tree.reroot(game, settings, seed).then_some(tree));
    match moves.as_slice() {
        [] => return decided(None, Decision::Over),
        &[only] => {
            kept.tree = reused;
            return decided(Some(only), Decision::OnlyMove);
        }
        _ => {}
    }
    let mut candidates = moves.as_slice().to_vec();
    let mut unsafe_moves = Vec::new();
    if settings.tactics {
        if let Some(win) = tactics::winning_move(game, &candidates) {
            return decided(Some(win), Decision::Win);
        }
        let safe = tactics::safe_moves(game, &candidates);
        // When every move loses at once, search them all anyway: the
        // opponent may still miss the win.
        if !safe.is_empty() {
            unsafe_moves = candidates.clone();
            unsafe_moves.retain(|square| !safe.contains(square));
            candidates = safe;
        }
        if let &[only] = candidates.as_slice() {
            kept.tree = reused;
            return decided(Some(only), Decision::OnlyMove);
        }
    }
    let carried = reused.as_ref().map_or(0, |tree| tree.nodes[0].visits);
    let mut tree = match reused {
        Some(mut tree) => {
            tree.rule_out(&candidates, &unsafe_moves);
            tree
        }
        None => {
            let mut tree = Tree::new(game.clone(), candidates[0], settings, seed, moves);
            tree.expand_with(0, game, &candidates);
            tree
        }
    };
    let iterations = tree.run(&settings.budget, watch);
    let decision = if tree.nodes[0].proof == Proof::Open {
        Decision::Search
    } else {
        Decision::Solved
    };
    let report = Report {
        square: Some(tree.best()),
        iterations,
        nodes: tree.nodes.len(),
        reused: carried,
        decision,
    };
    kept.tree = Some(tree);
    report
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
    solver: bool,
    playout: Playout,
    prior: u8,
}

/// The prior mean of `square` for `me`, the side to move in `game`: ½,
/// more for a move that wins its board, less for one that hands the
/// opponent a board they can win at once or a free choice.
fn prior_mean<G: Game>(game: &G, square: Square, me: Seat) -> f32 {
    let mut mean = 0.5;
    if game.wins_board(square, me) {
        mean += 0.2;
    }
    let mut next = game.clone();
    next.play_unchecked(square);
    if next.can_win_a_board() {
        mean -= 0.2;
    } else if next.free_choice() {
        mean -= 0.1;
    }
    mean
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
            solver: settings.solver,
            playout: settings.playout,
            prior: settings.prior,
        }
    }

    /// Makes the node of `game` (one or two plies below the root) the new
    /// root, keeping only its subtree, and takes `settings` and `seed` for
    /// the next search. False when `game` is not in the tree.
    fn reroot(&mut self, game: &G, settings: &Settings, seed: u64) -> bool {
        let Some(node) = self.find(game) else {
            return false;
        };
        self.compact(node);
        self.root = game.clone();
        self.me = game.turn();
        self.rng = Rng::new(seed);
        self.exploration = settings.exploration;
        self.tactics = settings.tactics;
        self.solver = settings.solver;
        self.playout = settings.playout;
        self.prior = settings.prior;
        true
    }

    /// The node whose position is `game`, one or two plies below the root.
    fn find(&self, game: &G) -> Option<usize> {
        let plies = game.ply().checked_sub(self.root.ply())?;
        if !(1..=2).contains(&plies) {
            return None;
        }
        let last = game.last_move()?;
        let root = self.nodes[0];
        for child in root.first as usize..root.first as usize + usize::from(root.count) {
            let mut next = self.root.clone();
            next.play_unchecked(self.nodes[child].square);
            if plies == 1 {
                if next == *game {
                    return Some(child);
                }
                continue;
            }
            let below = self.nodes[child];
            let first = below.first as usize;
            for grandchild in first..first + usize::from(below.count) {
                if self.nodes[grandchild].square != last {
                    continue;
                }
                let mut after = next.clone();
                after.play_unchecked(last);
                if after == *game {
                    return Some(grandchild);
                }
            }
        }
        None
    }

    /// Keeps only the subtree of `node`, with `node` as the root, children
    /// still contiguous (copied breadth first).
    fn compact(&mut self, node: usize) {
        let mut kept = Vec::with_capacity(self.nodes.len().max(4_096));
        kept.push(self.nodes[node]);
        let mut at = 0;
        while at < kept.len() {
            let here = kept[at];
            if here.count > 0 {
                let first = here.first as usize;
                // Below MAX_NODES, so it fits in a u32.
                kept[at].first = kept.len() as u32;
                kept.extend_from_slice(&self.nodes[first..first + usize::from(here.count)]);
            }
            at += 1;
        }
        self.nodes = kept;
    }

    /// Readies a kept root for a search limited to `candidates`: expands it
    /// when it is a leaf, else proves the `unsafe_moves` among its children
    /// lost (each lets the opponent win at once), as a fresh search would
    /// not have them.
    fn rule_out(&mut self, candidates: &[Square], unsafe_moves: &[Square]) {
        let root = self.nodes[0];
        if root.count == 0 {
            let root = self.root.clone();
            self.expand_with(0, &root, candidates);
            return;
        }
        let first = root.first as usize;
        for child in &mut self.nodes[first..first + usize::from(root.count)] {
            if child.proof == Proof::Open && unsafe_moves.contains(&child.square) {
                child.proof = Proof::Loss;
                child.plies = 1;
            }
        }
        if self.solver && self.nodes[0].proof == Proof::Open {
            let (proof, plies) = self.proof_from_children(0);
            if proof != Proof::Open {
                self.nodes[0].proof = proof;
                self.nodes[0].plies = plies.saturating_add(1);
            }
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
            if self.nodes[0].proof != Proof::Open {
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
        let result = loop {
            let status = game.status();
            if status.is_over() {
                if self.solver {
                    self.prove_terminal(node, status);
                }
                break self.value(status);
            }
            let here = self.nodes[node];
            if here.proof != Proof::Open {
                break self.proven_value(here.proof);
            }
            // A leaf's first visit is a playout; its second expands it.
            if here.count == 0 && (here.real_visits() == 0 || !self.expand(node, &game)) {
                let status = playout(&mut game, &mut self.rng, self.playout);
                break self.value(status);
            }
            node = self.select(node);
            game.play_unchecked(self.nodes[node].square);
            // Below MAX_NODES, so it fits in a u32.
            self.path.push(node as u32);
        };
        self.update(result);
        if self.solver {
            self.back_up_proofs();
        }
    }

    /// The result of a finished match for the root's side: 1 win, ½ draw.
    fn value(&self, status: Status) -> f32 {
        match status.winner() {
            Some(seat) if seat == self.me => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }

    /// The result for the root's side of the proven node ending the path.
    fn proven_value(&self, proof: Proof) -> f32 {
        // The root's side moved into the nodes at odd steps.
        let mine = self.path.len().is_multiple_of(2);
        match (proof, mine) {
            (Proof::Win, true) | (Proof::Loss, false) => 1.0,
            (Proof::Win, false) | (Proof::Loss, true) => 0.0,
            _ => 0.5,
        }
    }

    /// Marks `node`, where the match is over, won or drawn by its mover.
    fn prove_terminal(&mut self, node: usize, status: Status) {
        let node = &mut self.nodes[node];
        node.proof = if status.winner().is_some() {
            // Only the mover can have won on their own move.
            Proof::Win
        } else {
            Proof::Draw
        };
        node.plies = 0;
    }

    /// Walks the path up from its end while the child just proven proves
    /// its parent too.
    fn back_up_proofs(&mut self) {
        for step in (1..self.path.len()).rev() {
            if self.nodes[self.path[step] as usize].proof == Proof::Open {
                return;
            }
            let parent = self.path[step - 1] as usize;
            if self.nodes[parent].proof != Proof::Open {
                return;
            }
            let (proof, plies) = self.proof_from_children(parent);
            if proof == Proof::Open {
                return;
            }
            let node = &mut self.nodes[parent];
            node.proof = proof;
            node.plies = plies.saturating_add(1);
        }
    }

    /// What the children of `node` prove about it, and the length of the
    /// line that proves it (before the move into `node`).
    fn proof_from_children(&self, node: usize) -> (Proof, u8) {
        let parent = self.nodes[node];
        let first = parent.first as usize;
        let children = &self.nodes[first..first + usize::from(parent.count)];
        // A winning reply: lost, by the shortest win.
        if let Some(plies) = children
            .iter()
            .filter(|c| c.proof == Proof::Win)
            .map(|c| c.plies)
            .min()
        {
            return (Proof::Loss, plies);
        }
        if children.iter().any(|c| c.proof == Proof::Open) {
            return (Proof::Open, 0);
        }
        let longest = children.iter().map(|c| c.plies).max().unwrap_or(0);
        if children.iter().any(|c| c.proof == Proof::Draw) {
            (Proof::Draw, longest)
        } else {
            (Proof::Win, longest)
        }
    }

    /// Gives `node` its children: the legal moves of `game`, or only a move
    /// that wins the match when tactics are on. False when the tree is full.
    fn expand(&mut self, node: usize, game: &G) -> bool {
        game.legal_moves(&mut self.moves);
        let moves = std::mem::take(&mut self.moves);
        let win = if self.tactics {
            game.match_winning_move()
        } else {
            None
        };
        let list = match &win {
            Some(win) => std::slice::from_ref(win),
            None => moves.as_slice(),
        };
        let expanded = self.nodes.len() + list.len() <= MAX_NODES;
        if expanded {
            self.expand_with(node, game, list);
        }
        self.moves = moves;
        expanded
    }

    /// Appends children for `squares`, in random order so that the unvisited
    /// ones are tried in random order.
    fn expand_with(&mut self, node: usize, game: &G, squares: &[Square]) {
        let first = self.nodes.len();
        if self.prior == 0 {
            self.nodes.extend(squares.iter().map(|&sq| Node::leaf(sq)));
        } else {
            let me = game.turn();
            for &square in squares {
                let mean = prior_mean(game, square, me);
                self.nodes.push(Node::with_prior(square, self.prior, mean));
            }
        }
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
            // A proven loss is never worth another visit (an unproven node
            // always has a child that is not one).
            if child.proof == Proof::Loss {
                continue;
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
    fn update(&mut self, mine: f32) {
        let theirs = 1.0 - mine;
        for (step, &index) in self.path.iter().enumerate() {
            let node = &mut self.nodes[index as usize];
            node.visits += 1;
            node.score += if step % 2 == 1 { mine } else { theirs };
            node.rsqrt = (node.visits as f32).sqrt().recip();
        }
    }

    /// A proven win by its shortest line; otherwise the root's most visited
    /// child that is not a proven loss, the better scoring on a tie; when
    /// every child is a proven loss, the longest. The first child (a random
    /// one, the children being shuffled) when nothing was visited.
    fn best(&self) -> Square {
        self.best_child().square
    }

    /// The node of the move [`Tree::best`] plays.
    fn best_child(&self) -> &Node {
        let root = &self.nodes[0];
        let first = root.first as usize;
        let children = &self.nodes[first..first + usize::from(root.count)];
        if let Some(win) = children
            .iter()
            .filter(|c| c.proof == Proof::Win)
            .min_by_key(|c| c.plies)
        {
            return win;
        }
        if children.iter().all(|c| c.proof == Proof::Loss)
            && let Some(longest) = children.iter().max_by_key(|c| c.plies)
        {
            return longest;
        }
        let mut best: Option<&Node> = None;
        for child in children.iter().filter(|c| c.proof != Proof::Loss) {
            if best.is_none_or(|b| {
                child.visits > b.visits || (child.visits == b.visits && child.score > b.score)
            }) {
                best = Some(child);
            }
        }
        best.unwrap_or(&children[0])
    }

    /// The root's side's chance (1 win, ½ draw) when playing [`Tree::best`]:
    /// the exact value once proven, otherwise that move's mean result.
    fn best_value(&self) -> f32 {
        let child = self.best_child();
        match child.proof {
            Proof::Win => 1.0,
            Proof::Loss => 0.0,
            Proof::Draw => 0.5,
            Proof::Open if child.visits == 0 => 0.5,
            Proof::Open => child.score / child.visits as f32,
        }
    }
}

/// What a search found out about its root, for analysis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// The move the search would play; `None` only when the match is over.
    pub square: Option<Square>,
    /// The side to move's winning chance with that move, draws counting
    /// half: exact (0, ½ or 1) when proven, otherwise the move's mean result.
    pub value: f32,
    /// Whether the value is proven (the match is over, the move wins at
    /// once, or the solver proved it).
    pub proven: bool,
    /// Iterations run.
    pub iterations: u32,
}

/// Evaluates `game` for the side to move within `settings`: unlike
/// [`search`], a position with one sensible move is searched too, since its
/// value is wanted as well as the move.
///
/// Deterministic for a given seed when the iteration bound is what stops it.
pub fn evaluate<G: Game>(
    game: &G,
    settings: &Settings,
    seed: u64,
    watch: &dyn Stopwatch,
) -> Evaluation {
    let exact = |square, value| Evaluation {
        square,
        value,
        proven: true,
        iterations: 0,
    };
    let status = game.status();
    if status.is_over() {
        // The last mover ended the match: the side to move cannot have won it.
        let value = if status.winner().is_some() { 0.0 } else { 0.5 };
        return exact(None, value);
    }
    let mut moves = MoveList::new(G::DEPTH);
    game.legal_moves(&mut moves);
    let mut candidates = moves.as_slice().to_vec();
    if settings.tactics {
        if let Some(win) = tactics::winning_move(game, &candidates) {
            return exact(Some(win), 1.0);
        }
        let safe = tactics::safe_moves(game, &candidates);
        if !safe.is_empty() {
            candidates = safe;
        }
    }
    let Some(&first) = candidates.first() else {
        return exact(None, 0.5);
    };
    let mut tree = Tree::new(game.clone(), first, settings, seed, moves);
    tree.expand_with(0, game, &candidates);
    let iterations = tree.run(&settings.budget, watch);
    Evaluation {
        square: Some(tree.best()),
        value: tree.best_value(),
        proven: tree.nodes[0].proof != Proof::Open || tree.best_child().proof != Proof::Open,
        iterations,
    }
}
