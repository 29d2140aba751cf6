//! Maximum-cardinality matching in general graphs (Edmonds' blossom
//! algorithm): the feasibility oracle behind Swiss pairing.
//!
//! The graph is implicit: vertices `0..n`, some of them removed, and an edge
//! predicate passed to each call, so the pairing rules stay in one place.
//! The pairing keeps a perfect matching of the players still to pair; fixing
//! one more pair costs one augmenting-path search between the two players'
//! former partners, usually a few steps in the dense graphs of real events.
//!
//! Over 400 lines: the augmenting-path search is one algorithm, and a quarter
//! of the file is its unit tests.

const NONE: usize = usize::MAX;

/// A matching over the live vertices of `0..n`, with the scratch space of
/// the searches.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    alive: Vec<bool>,
    /// The live vertices, in no particular order (removal swaps).
    list: Vec<usize>,
    pos: Vec<usize>,
    mate: Vec<usize>,
    parent: Vec<usize>,
    base: Vec<usize>,
    outer: Vec<bool>,
    in_blossom: Vec<bool>,
    seen: Vec<bool>,
    queue: Vec<usize>,
    pruned: Vec<bool>,
    /// The vertices the latest search labelled: all it has to reset, and all
    /// a blossom can contain, so a search costs what it explores.
    tree: Vec<usize>,
    /// Scratch list of the vertices `lca` marked.
    marked: Vec<usize>,
    /// Scratch list of the vertices a blossom makes even.
    queue_scratch: Vec<usize>,
}

/// Free vertices a search checks each new even vertex against directly
/// (when there are at most this many): in dense graphs the path to one of
/// them is found a step after it opens, long before a blossom forms.
const EAGER_TARGETS: usize = 8;

impl Matcher {
    /// All of `0..n` alive, nothing matched.
    pub(crate) fn new(n: usize) -> Matcher {
        Matcher {
            alive: vec![true; n],
            list: (0..n).collect(),
            pos: (0..n).collect(),
            mate: vec![NONE; n],
            parent: vec![NONE; n],
            base: (0..n).collect(),
            outer: vec![false; n],
            in_blossom: vec![false; n],
            seen: vec![false; n],
            queue: Vec::with_capacity(n),
            pruned: vec![false; n],
            tree: Vec::new(),
            marked: Vec::new(),
            queue_scratch: Vec::new(),
        }
    }

    /// Whether `v` is still in the graph.
    #[cfg(test)]
    pub(crate) fn is_alive(&self, v: usize) -> bool {
        self.alive[v]
    }

    /// `v`'s partner in the matching.
    pub(crate) fn mate(&self, v: usize) -> Option<usize> {
        (self.mate[v] != NONE).then_some(self.mate[v])
    }

    /// The live vertices that have no partner.
    pub(crate) fn free(&self) -> Vec<usize> {
        let mut free: Vec<usize> = self
            .list
            .iter()
            .copied()
            .filter(|&v| self.mate[v] == NONE)
            .collect();
        free.sort_unstable();
        free
    }

    /// Takes `v` out of the graph; its partner, if any, becomes free.
    pub(crate) fn remove(&mut self, v: usize) {
        if !self.alive[v] {
            return;
        }
        self.alive[v] = false;
        let at = self.pos[v];
        let last = self.list.len() - 1;
        self.list.swap(at, last);
        let moved = self.list[at];
        self.pos[moved] = at;
        self.list.pop();
        self.unmatch(v);
    }

    fn revive(&mut self, v: usize) {
        if self.alive[v] {
            return;
        }
        self.alive[v] = true;
        self.pos[v] = self.list.len();
        self.list.push(v);
    }

    fn unmatch(&mut self, v: usize) {
        let m = self.mate[v];
        if m != NONE {
            self.mate[m] = NONE;
            self.mate[v] = NONE;
        }
    }

    fn join(&mut self, a: usize, b: usize) {
        self.mate[a] = b;
        self.mate[b] = a;
    }

    /// Makes the matching maximum over the live vertices and returns how many
    /// of them stay free. Starts greedily in `list` order (the caller's rank
    /// order while nothing was removed), then augments ([`Self::augment_free`]).
    pub(crate) fn maximize(&mut self, edge: &impl Fn(usize, usize) -> bool) -> usize {
        for i in 0..self.list.len() {
            let v = self.list[i];
            if self.mate[v] != NONE {
                continue;
            }
            for j in i + 1..self.list.len() {
                let u = self.list[j];
                if self.mate[u] == NONE && edge(v, u) {
                    self.join(v, u);
                    break;
                }
            }
        }
        self.augment_free(edge)
    }

    /// Pairs `a` and `b` (both live and free) in the matching.
    pub(crate) fn pair(&mut self, a: usize, b: usize) {
        debug_assert!(self.mate[a] == NONE && self.mate[b] == NONE);
        self.join(a, b);
    }

    /// Makes the matching maximum by augmenting paths from each free vertex,
    /// keeping the pairs it has where no path runs; returns how many live
    /// vertices stay free. A search that fails leaves a Hungarian tree, whose
    /// vertices no later augmenting path can use, so they are skipped for
    /// the rest of the call.
    pub(crate) fn augment_free(&mut self, edge: &impl Fn(usize, usize) -> bool) -> usize {
        for &v in &self.list {
            self.pruned[v] = false;
        }
        let roots = self.free();
        let mut free = roots.clone();
        for v in roots {
            if self.mate[v] != NONE || self.pruned[v] {
                continue;
            }
            free.retain(|&u| self.mate[u] == NONE && !self.pruned[u]);
            if free.len() < 2 {
                // A path needs a second free end: with an odd number of
                // players the last free one has none to reach.
                break;
            }
            let targets: Vec<usize> = if free.len() <= EAGER_TARGETS + 1 {
                free.iter().copied().filter(|&u| u != v).collect()
            } else {
                Vec::new()
            };
            match self.search(v, edge, true, &targets) {
                Some(end) => self.augment(end),
                None => {
                    for &u in &self.tree {
                        self.pruned[u] = true;
                    }
                }
            }
        }
        for &v in &self.list {
            self.pruned[v] = false;
        }
        self.list.iter().filter(|&&v| self.mate[v] == NONE).count()
    }

    /// With a maximum matching that leaves exactly one live vertex free: the
    /// live vertices that some maximum matching leaves free (Gallai-Edmonds'
    /// D set), i.e. those whose removal leaves a perfectly matchable graph.
    /// They are the even vertices of the failed search from the free vertex.
    pub(crate) fn exposable(&mut self, edge: &impl Fn(usize, usize) -> bool) -> Vec<bool> {
        let mut exposable = vec![false; self.alive.len()];
        let free: Vec<usize> = self.free();
        if let [root] = free[..] {
            // No other free vertex, so the search cannot succeed: it maps
            // everything reachable by even alternating paths.
            let _ = self.search(root, edge, false, &[]);
            for &v in &self.list {
                exposable[v] = self.outer[v];
            }
        }
        exposable
    }

    /// With a maximum matching that leaves exactly one live vertex free and
    /// `v` exposable: removes `v` and re-matches so that every live vertex
    /// is matched. Returns false (and changes nothing) when that fails.
    pub(crate) fn remove_exposable(
        &mut self,
        v: usize,
        edge: &impl Fn(usize, usize) -> bool,
    ) -> bool {
        let partner = self.mate[v];
        self.remove(v);
        if partner == NONE {
            return true;
        }
        let others: Vec<usize> = self.free().into_iter().filter(|&u| u != partner).collect();
        let targets = if others.len() <= EAGER_TARGETS {
            &others[..]
        } else {
            &[]
        };
        match self.search(partner, edge, false, targets) {
            Some(end) => {
                self.augment(end);
                true
            }
            None => {
                self.revive(v);
                self.join(v, partner);
                false
            }
        }
    }

    /// With a perfect matching of the live vertices: whether `a` and `b` can
    /// be taken out as a pair leaving the rest perfectly matchable. If so,
    /// removes them and repairs the matching; if not, changes nothing.
    pub(crate) fn try_pair(
        &mut self,
        a: usize,
        b: usize,
        edge: &impl Fn(usize, usize) -> bool,
    ) -> bool {
        let (ma, mb) = (self.mate[a], self.mate[b]);
        if ma == b {
            self.remove(a);
            self.remove(b);
            return true;
        }
        if ma == NONE || mb == NONE {
            return false;
        }
        self.remove(a);
        self.remove(b);
        if edge(ma, mb) {
            self.join(ma, mb);
            return true;
        }
        match self.search(ma, edge, false, &[mb]) {
            Some(end) => {
                self.augment(end);
                true
            }
            None => {
                self.revive(a);
                self.revive(b);
                self.join(a, ma);
                self.join(b, mb);
                false
            }
        }
    }

    fn augment(&mut self, end: usize) {
        let mut v = end;
        while v != NONE {
            let pv = self.parent[v];
            let next = self.mate[pv];
            self.join(v, pv);
            v = next;
        }
    }

    fn lca(&mut self, mut a: usize, mut b: usize) -> usize {
        loop {
            a = self.base[a];
            self.seen[a] = true;
            self.marked.push(a);
            if self.mate[a] == NONE {
                break;
            }
            a = self.parent[self.mate[a]];
        }
        let found = loop {
            b = self.base[b];
            if self.seen[b] {
                break b;
            }
            b = self.parent[self.mate[b]];
        };
        for &v in &self.marked {
            self.seen[v] = false;
        }
        self.marked.clear();
        found
    }

    fn mark_path(&mut self, mut v: usize, b: usize, mut child: usize) {
        while self.base[v] != b {
            let m = self.mate[v];
            self.in_blossom[self.base[v]] = true;
            self.in_blossom[self.base[m]] = true;
            self.parent[v] = child;
            child = m;
            v = self.parent[m];
        }
    }

    /// Labels `u` even and queues it; if it is adjacent to one of the free
    /// `targets`, that closes an augmenting path, whose end is returned.
    fn label_even(
        &mut self,
        u: usize,
        edge: &impl Fn(usize, usize) -> bool,
        skip_pruned: bool,
        targets: &[usize],
    ) -> Option<usize> {
        self.outer[u] = true;
        self.tree.push(u);
        self.queue.push(u);
        for &t in targets {
            if t != u
                && self.alive[t]
                && self.mate[t] == NONE
                && self.parent[t] == NONE
                && !self.outer[t]
                && !(skip_pruned && self.pruned[t])
                && edge(u, t)
            {
                self.parent[t] = u;
                self.tree.push(t);
                return Some(t);
            }
        }
        None
    }

    /// Breadth-first search for an augmenting path from the free vertex
    /// `root` (Edmonds, contracting blossoms through `base`); returns its
    /// other end, with `parent` describing the path. `targets` are free
    /// vertices to try first (see [`EAGER_TARGETS`]).
    fn search(
        &mut self,
        root: usize,
        edge: &impl Fn(usize, usize) -> bool,
        skip_pruned: bool,
        targets: &[usize],
    ) -> Option<usize> {
        for &v in &self.tree {
            self.parent[v] = NONE;
            self.base[v] = v;
            self.outer[v] = false;
        }
        self.tree.clear();
        self.queue.clear();
        if let Some(end) = self.label_even(root, edge, skip_pruned, targets) {
            return Some(end);
        }
        let mut head = 0;
        while head < self.queue.len() {
            let v = self.queue[head];
            head += 1;
            for i in 0..self.list.len() {
                let to = self.list[i];
                if to == v
                    || self.base[v] == self.base[to]
                    || self.mate[v] == to
                    || (skip_pruned && self.pruned[to])
                    || !edge(v, to)
                {
                    continue;
                }
                let to_is_outer =
                    to == root || (self.mate[to] != NONE && self.parent[self.mate[to]] != NONE);
                if to_is_outer {
                    let b = self.lca(v, to);
                    self.mark_path(v, b, to);
                    self.mark_path(to, b, v);
                    // Only labelled vertices can be in the blossom. Clear
                    // the marks before labelling, which may return at once.
                    let labelled = self.tree.len();
                    let mut opened = std::mem::take(&mut self.queue_scratch);
                    for j in 0..labelled {
                        let u = self.tree[j];
                        if self.in_blossom[self.base[u]] {
                            self.base[u] = b;
                            if !self.outer[u] {
                                opened.push(u);
                            }
                        }
                    }
                    for j in 0..labelled {
                        let u = self.tree[j];
                        self.in_blossom[u] = false;
                    }
                    let mut found = None;
                    for &u in &opened {
                        if !self.outer[u] {
                            found = self.label_even(u, edge, skip_pruned, targets);
                            if found.is_some() {
                                break;
                            }
                        }
                    }
                    opened.clear();
                    self.queue_scratch = opened;
                    if found.is_some() {
                        return found;
                    }
                } else if self.parent[to] == NONE {
                    self.parent[to] = v;
                    self.tree.push(to);
                    let m = self.mate[to];
                    if m == NONE {
                        return Some(to);
                    }
                    if let Some(end) = self.label_even(m, edge, skip_pruned, targets) {
                        return Some(end);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The size of a maximum matching, by trying everything (small graphs).
    fn brute_max(n: usize, alive: &[bool], edge: &impl Fn(usize, usize) -> bool) -> usize {
        fn go(
            v: usize,
            used: &mut Vec<bool>,
            n: usize,
            edge: &impl Fn(usize, usize) -> bool,
        ) -> usize {
            if v == n {
                return 0;
            }
            if used[v] {
                return go(v + 1, used, n, edge);
            }
            used[v] = true;
            let mut best = go(v + 1, used, n, edge);
            for u in v + 1..n {
                if !used[u] && edge(v, u) {
                    used[u] = true;
                    best = best.max(1 + go(v + 1, used, n, edge));
                    used[u] = false;
                }
            }
            used[v] = false;
            best
        }
        let mut used: Vec<bool> = alive.iter().map(|a| !a).collect();
        go(0, &mut used, n, edge)
    }

    /// A random graph: an edge where the cell's value is below `density`.
    fn graph(n: usize, cells: &[u8], density: u8) -> impl Fn(usize, usize) -> bool + '_ {
        move |a: usize, b: usize| {
            let (a, b) = (a.min(b), a.max(b));
            a != b && cells[a * n + b] < density
        }
    }

    fn cells() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..100, 144)
    }

    fn check_matching(m: &Matcher, edge: &impl Fn(usize, usize) -> bool) {
        for &v in &m.list {
            if let Some(u) = m.mate(v) {
                assert!(m.is_alive(u));
                assert_eq!(m.mate(u), Some(v));
                assert!(edge(u, v), "matched along a non-edge {u}-{v}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn maximize_finds_a_maximum_matching(n in 1usize..13, cells in cells(), density in 5u8..95) {
            let edge = graph(n, &cells, density);
            let mut m = Matcher::new(n);
            let free = m.maximize(&edge);
            check_matching(&m, &edge);
            prop_assert_eq!((n - free) / 2, brute_max(n, &vec![true; n], &edge));
        }

        #[test]
        fn exposable_vertices_are_those_whose_removal_leaves_a_perfect_matching(
            n in (1usize..7).prop_map(|k| 2 * k - 1),
            cells in cells(),
            density in 5u8..95,
        ) {
            let edge = graph(n, &cells, density);
            let mut m = Matcher::new(n);
            if m.maximize(&edge) != 1 {
                return Ok(());
            }
            let exposable = m.exposable(&edge);
            for v in 0..n {
                let mut alive = vec![true; n];
                alive[v] = false;
                let perfect = brute_max(n, &alive, &edge) == (n - 1) / 2;
                prop_assert_eq!(exposable[v], perfect, "vertex {}", v);
                if perfect {
                    let mut copy = m.clone();
                    prop_assert!(copy.remove_exposable(v, &edge));
                    check_matching(&copy, &edge);
                    prop_assert!(copy.free().is_empty());
                }
            }
        }

        #[test]
        fn try_pair_accepts_exactly_the_pairs_that_leave_a_perfect_matching(
            n in (1usize..7).prop_map(|k| 2 * k),
            cells in cells(),
            density in 5u8..95,
        ) {
            let edge = graph(n, &cells, density);
            let mut m = Matcher::new(n);
            if m.maximize(&edge) != 0 {
                return Ok(());
            }
            for a in 0..n {
                for b in a + 1..n {
                    if !edge(a, b) {
                        continue;
                    }
                    let mut alive = vec![true; n];
                    alive[a] = false;
                    alive[b] = false;
                    let perfect = brute_max(n, &alive, &edge) == n / 2 - 1;
                    let mut copy = m.clone();
                    let before = copy.mate.clone();
                    prop_assert_eq!(copy.try_pair(a, b, &edge), perfect, "pair {}-{}", a, b);
                    check_matching(&copy, &edge);
                    if perfect {
                        prop_assert!(copy.free().is_empty());
                        prop_assert!(!copy.is_alive(a) && !copy.is_alive(b));
                    } else {
                        prop_assert_eq!(&copy.mate, &before, "a refused pair changes nothing");
                        prop_assert_eq!(copy.list.len(), n);
                    }
                }
            }
        }
    }
}
