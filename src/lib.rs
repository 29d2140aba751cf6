//! `uttt`: a ranked Ultimate Tic-Tac-Toe server.
