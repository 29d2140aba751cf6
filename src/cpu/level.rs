//! The CPU's strength levels, as the rest of the server names them.

/// A CPU strength, 1 (a beginner can beat it) to 5 (the strongest the budget allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Level(u8);

impl Level {
    /// The weakest level.
    pub const MIN: Level = Level(1);
    /// The strongest level.
    pub const MAX: Level = Level(5);
    /// The level of the CPU that plays for a dropped player.
    pub const SUBSTITUTE: Level = Level(3);

    /// A level in 1..=5.
    pub fn new(level: u8) -> Option<Level> {
        (1..=5).contains(&level).then_some(Level(level))
    }

    /// The number, 1..=5.
    pub fn get(self) -> u8 {
        self.0
    }

    /// Every level, weakest first.
    pub fn all() -> impl Iterator<Item = Level> {
        (1..=5).map(Level)
    }
}
