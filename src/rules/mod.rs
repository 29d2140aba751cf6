//! The rules of recursive Ultimate Tic-Tac-Toe, depth 1 to 4, exactly as
//! `RULES.md` states them: the board tree, the send rule and its relaxation,
//! claiming and drawing boards, the end of the match.
//!
//! Pure: no I/O, no clock, no randomness. Each depth has its own
//! monomorphised type ([`Tree1`] … [`Tree4`], bit sets in fixed arrays, see
//! [`tree`]) behind the [`Game`] trait; [`Position`] is the enum over them
//! that the rest of the server uses.

mod address;
mod depth;
pub mod encoding;
mod game;
mod illegal;
pub mod lines;
mod moves;
pub mod perft;
mod position;
mod seat;
mod square;
mod status;
pub mod tree;

pub use address::{Address, AddressError};
pub use depth::{Depth, DepthError};
pub use encoding::{DecodeError, decode, encode};
pub use game::Game;
pub use illegal::IllegalMove;
pub use moves::MoveList;
pub use position::{Position, ReplayError};
pub use seat::Seat;
pub use square::Square;
pub use status::{BoardStatus, Outcome, Status};
pub use tree::{Tree, Tree1, Tree2, Tree3, Tree4};
