//! Addresses of boards and squares in the board tree.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A path from the root of the board tree: 0 to 4 coordinates, each a position
/// 0..=8 of a board (`0 1 2 / 3 4 5 / 6 7 8`, row by row).
///
/// At depth `d` a square's address has `d` coordinates and a board's address
/// has 0..d-1; the root is the empty address. In text (the API's `boards` keys
/// and the export notation) the coordinates are joined by dots, `"4.0"`, and the
/// root is the empty string.
///
/// Addresses order by their coordinates, so a board sorts right before the
/// boards and squares inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    len: u8,
    /// Unused coordinates are always 0, so the derived equality and hash hold.
    coords: [u8; Address::MAX_LEN],
}

/// Why a list of coordinates or a dotted string is not an [`Address`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// More than four coordinates.
    #[error("an address has at most 4 coordinates, not {0}")]
    TooManyCoordinates(usize),
    /// A coordinate above 8.
    #[error("a coordinate is a position 0..=8, not {0}")]
    CoordinateOutOfRange(u8),
    /// A dotted component that is not a single digit.
    #[error("an address is single digits joined by dots")]
    Malformed,
}

impl Address {
    /// The most coordinates an address has (a square at depth 4).
    pub const MAX_LEN: usize = 4;

    /// The root board: no coordinates.
    pub const ROOT: Address = Address {
        len: 0,
        coords: [0; Address::MAX_LEN],
    };

    /// An address from its coordinates, root first.
    ///
    /// # Errors
    /// [`AddressError::TooManyCoordinates`] for more than four coordinates,
    /// [`AddressError::CoordinateOutOfRange`] for a coordinate above 8.
    pub fn new(coords: &[u8]) -> Result<Address, AddressError> {
        if coords.len() > Address::MAX_LEN {
            return Err(AddressError::TooManyCoordinates(coords.len()));
        }
        let mut address = Address::ROOT;
        for &coord in coords {
            address = address
                .child(coord)
                .ok_or(AddressError::CoordinateOutOfRange(coord))?;
        }
        Ok(address)
    }

    /// The coordinates, root first.
    #[must_use]
    pub fn coords(&self) -> &[u8] {
        &self.coords[..usize::from(self.len)]
    }

    /// The number of coordinates: the level of the board or square it names.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether this is the root (no coordinates).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The board that contains this one (drop the last coordinate); `None` for the root.
    #[must_use]
    pub fn parent(&self) -> Option<Address> {
        let last = usize::from(self.len).checked_sub(1)?;
        let mut parent = *self;
        parent.coords[last] = 0;
        parent.len -= 1;
        Some(parent)
    }

    /// The board or square at `position` inside this one; `None` when `position`
    /// is above 8 or this address already has four coordinates.
    #[must_use]
    pub fn child(&self, position: u8) -> Option<Address> {
        if position > 8 || self.len() == Address::MAX_LEN {
            return None;
        }
        let mut child = *self;
        child.coords[self.len()] = position;
        child.len += 1;
        Some(child)
    }

    /// The address without its first coordinate: where a move here sends the
    /// opponent. `None` for the root.
    #[must_use]
    pub fn without_first(&self) -> Option<Address> {
        let (_, rest) = self.coords().split_first()?;
        let mut sent = Address::ROOT;
        sent.coords[..rest.len()].copy_from_slice(rest);
        sent.len = self.len - 1;
        Some(sent)
    }

    /// Whether `other` is this address or lies inside it (this is a prefix of it).
    #[must_use]
    pub fn contains(&self, other: &Address) -> bool {
        other.coords().starts_with(self.coords())
    }

    /// The index of this board in the complete 9-ary heap of boards: the root
    /// is 0, the children of board `i` are `9i+1..=9i+9`.
    pub(crate) fn heap_index(&self) -> usize {
        let level_start = (9usize.pow(u32::from(self.len)) - 1) / 8;
        level_start + self.offset()
    }

    /// The coordinates read as a base-9 number (for a square: its flat index).
    pub(crate) fn offset(&self) -> usize {
        self.coords()
            .iter()
            .fold(0, |offset, &coord| offset * 9 + usize::from(coord))
    }

    /// The address of heap index `index` (see [`Address::heap_index`]); indices
    /// past depth 4 are clamped to its last level.
    pub(crate) fn from_heap_index(index: usize) -> Address {
        let mut level = 0;
        let mut level_start = 0;
        let mut level_size = 1;
        while level < Address::MAX_LEN && index >= level_start + level_size {
            level_start += level_size;
            level_size *= 9;
            level += 1;
        }
        Address::from_offset(level, index - level_start)
    }

    /// The address with `len` coordinates whose base-9 value is `offset`.
    pub(crate) fn from_offset(len: usize, mut offset: usize) -> Address {
        let mut address = Address::ROOT;
        let len = len.min(Address::MAX_LEN);
        for slot in address.coords[..len].iter_mut().rev() {
            // `offset % 9` is below 9, so the cast is lossless.
            *slot = (offset % 9) as u8;
            offset /= 9;
        }
        // `len` is at most 4.
        address.len = len as u8;
        address
    }
}

impl Ord for Address {
    fn cmp(&self, other: &Address) -> Ordering {
        self.coords().cmp(other.coords())
    }
}

impl PartialOrd for Address {
    fn partial_cmp(&self, other: &Address) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, coord) in self.coords().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{coord}")?;
        }
        Ok(())
    }
}

impl FromStr for Address {
    type Err = AddressError;

    /// Parses the dotted form: `""` is the root, `"4.0"` is `[4, 0]`.
    fn from_str(text: &str) -> Result<Address, AddressError> {
        if text.is_empty() {
            return Ok(Address::ROOT);
        }
        let mut address = Address::ROOT;
        for (i, part) in text.split('.').enumerate() {
            let &[digit] = part.as_bytes() else {
                return Err(AddressError::Malformed);
            };
            if !digit.is_ascii_digit() {
                return Err(AddressError::Malformed);
            }
            if i == Address::MAX_LEN {
                return Err(AddressError::TooManyCoordinates(text.split('.').count()));
            }
            let coord = digit - b'0';
            address = address
                .child(coord)
                .ok_or(AddressError::CoordinateOutOfRange(coord))?;
        }
        Ok(address)
    }
}
