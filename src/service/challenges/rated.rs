//! Who may play a rated challenge: checked when it is made, and again when
//! it is accepted (either player may have become a bot meanwhile).

use crate::config::LadderConfig;

use super::super::{Error, FieldError, Result};

/// Whether both players may play a rated match on `ladder`: it is rated, and
/// it takes bots when either is one.
pub(super) fn check_ladder(ladder: &LadderConfig, bots: bool) -> Result<()> {
    if !ladder.rated {
        return Err(Error::Validation(vec![FieldError::new(
            "ladder",
            "this ladder is not rated; leave `ladder` out for a casual challenge",
        )]));
    }
    check_bots(ladder, bots)
}

/// Whether `ladder` takes the players, `bots` when either is a bot account.
pub(super) fn check_bots(ladder: &LadderConfig, bots: bool) -> Result<()> {
    if bots && !ladder.bots {
        return Err(Error::Forbidden(
            "bot accounts may only play on ladders open to bots",
        ));
    }
    Ok(())
}
