//! The typed words of a stored match: its ids, mode, status, result and seat
//! controllers. Each is stored as the same text it always was (no migration),
//! through one generic `ToSql`/`FromSql` pair that serves PostgreSQL, SQLite
//! and the multi-backend connection alike; a text no variant names is a
//! deserialisation error, never a silent default.

use std::fmt;
use std::str::FromStr;

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Text;
use diesel::{AsExpression, FromSqlRow};

use crate::rules::Seat;

/// A stored text that names no variant of the type it was read into.
#[derive(Debug, thiserror::Error)]
#[error("`{text}` is not a {kind}")]
pub struct UnknownText {
    /// What was being read.
    pub kind: &'static str,
    /// The stored text.
    pub text: String,
}

/// Implements the text mapping (`as_str`, `FromStr`, `Display`, diesel) of a
/// type given its `as_str` and its parse.
macro_rules! text_mapping {
    ($ty:ty, $kind:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = UnknownText;
            fn from_str(text: &str) -> Result<Self, UnknownText> {
                <$ty>::parse(text).ok_or_else(|| UnknownText {
                    kind: $kind,
                    text: text.to_owned(),
                })
            }
        }

        impl<DB> ToSql<Text, DB> for $ty
        where
            DB: Backend,
            str: ToSql<Text, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                <str as ToSql<Text, DB>>::to_sql(self.as_str(), out)
            }
        }

        impl<DB> FromSql<Text, DB> for $ty
        where
            DB: Backend,
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let text = <String as FromSql<Text, DB>>::from_sql(bytes)?;
                Ok(text.parse::<$ty>()?)
            }
        }
    };
}

/// Declares a fieldless enum stored as one fixed text per variant.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $kind:literal {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
        #[diesel(sql_type = Text)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored (and API) text.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The variant a text names.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $( $text => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        text_mapping!($name, $kind);
    };
}

text_enum! {
    /// How a match was made.
    Mode, "match mode" {
        /// Paired by matchmaking on a ladder.
        Ranked => "ranked",
        /// A room between two players.
        Casual => "casual",
        /// Against the CPU.
        Practice => "practice",
        /// Paired by a tournament (its ladder, if rated, in `ladder`).
        Tournament => "tournament",
    }
}

text_enum! {
    /// Whether a match is still being played.
    MatchStatus, "match status" {
        /// Being played.
        Active => "active",
        /// Decided.
        Finished => "finished",
    }
}

text_enum! {
    /// Why a match ended.
    EndReason, "end reason" {
        /// A line of three on the root board.
        ThreeInARow => "three_in_a_row",
        /// The root board was decided without a winner.
        Draw => "draw",
        /// The side to move ran out of time.
        Timeout => "timeout",
        /// A player resigned.
        Resignation => "resignation",
    }
}

text_enum! {
    /// Who plays a seat right now.
    Controller, "seat controller" {
        /// The seated player.
        Human => "human",
        /// The CPU: the opponent of a practice match, or the substitute of a dropped player.
        Cpu => "cpu",
    }
}

/// A seat as a column stores it (`x` or `o`): the side to move, the winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub struct StoredSeat(pub Seat);

impl StoredSeat {
    /// `x` or `o`.
    pub fn as_str(self) -> &'static str {
        match self.0 {
            Seat::X => "x",
            Seat::O => "o",
        }
    }

    /// Parses `x` or `o`.
    pub fn parse(text: &str) -> Option<StoredSeat> {
        match text {
            "x" => Some(StoredSeat(Seat::X)),
            "o" => Some(StoredSeat(Seat::O)),
            _ => None,
        }
    }
}

impl From<Seat> for StoredSeat {
    fn from(seat: Seat) -> Self {
        StoredSeat(seat)
    }
}

text_mapping!(StoredSeat, "seat");

/// Declares a text id newtype.
macro_rules! text_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow,
            serde::Serialize,
        )]
        #[diesel(sql_type = Text)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as an owned string.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_owned())
            }
        }

        // Read as text wherever an id is passed on (queries, keys, channels),
        // so the newtype costs no conversions at those sites.
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<DB> ToSql<Text, DB> for $name
        where
            DB: Backend,
            str: ToSql<Text, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                <str as ToSql<Text, DB>>::to_sql(&self.0, out)
            }
        }

        impl<DB> FromSql<Text, DB> for $name
        where
            DB: Backend,
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                <String as FromSql<Text, DB>>::from_sql(bytes).map($name)
            }
        }
    };
}

text_id! {
    /// A match's id: short and URL-safe, because it is the match link.
    MatchId
}

text_id! {
    /// A player's id.
    PlayerId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_reads_back_from_its_text() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>().unwrap(), *m);
        }
        for s in MatchStatus::ALL {
            assert_eq!(s.as_str().parse::<MatchStatus>().unwrap(), *s);
        }
        for r in EndReason::ALL {
            assert_eq!(r.as_str().parse::<EndReason>().unwrap(), *r);
        }
        for c in Controller::ALL {
            assert_eq!(c.as_str().parse::<Controller>().unwrap(), *c);
        }
        for seat in [Seat::X, Seat::O] {
            let stored = StoredSeat(seat);
            assert_eq!(stored.as_str().parse::<StoredSeat>().unwrap(), stored);
        }
    }

    #[test]
    fn unknown_text_is_an_error_naming_it() {
        let err = "paused".parse::<MatchStatus>().unwrap_err();
        assert_eq!(err.to_string(), "`paused` is not a match status");
        assert!("X".parse::<StoredSeat>().is_err());
        assert!("".parse::<Mode>().is_err());
    }
}
