//! `uttt`: a ranked Ultimate Tic-Tac-Toe server.

pub mod rules;
