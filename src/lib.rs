//! `uttt`: a ranked Ultimate Tic-Tac-Toe server.

pub mod cli;
pub mod rules;
