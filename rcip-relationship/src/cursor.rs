//! Opaque paging cursors, bound to the query that made them.
//!
//! A cursor is the position after which the next page starts plus a hash of what it was made
//! for (workspace and filters), hex-encoded. A cursor from another query is refused
//! (`INVALID_CURSOR`); clients must neither build nor edit cursors.

use super::error::RecordError;
use rcip_runtime::__private::shared::fnv1a;

// The capabilities' schemas declare the same bounds (`rcip_relationship`).
#[allow(clippy::cast_possible_truncation)] // 20 and 100
/// Items per page when no limit is given.
pub const DEFAULT_LIMIT: usize = crate::DEFAULT_PAGE_LIMIT as usize;
#[allow(clippy::cast_possible_truncation)]
/// The largest page.
pub const MAX_LIMIT: usize = crate::MAX_PAGE_LIMIT as usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) position: u64,
}

impl Cursor {
    pub(crate) fn encode(self, binding: &str) -> String {
        format!("c1{:016x}{:016x}", self.position, fnv1a(binding))
    }

    /// The position a page starts after: the cursor's, or 0 without one.
    pub(crate) fn after(cursor: Option<&str>, binding: &str) -> Result<u64, RecordError> {
        cursor.map_or(Ok(0), |c| Ok(Self::decode(c, binding)?.position))
    }

    pub(crate) fn decode(text: &str, binding: &str) -> Result<Self, RecordError> {
        let digits = text
            .strip_prefix("c1")
            .filter(|d| d.len() == 32 && d.is_ascii())
            .ok_or(RecordError::InvalidCursor)?;
        let (position, hash) = digits.split_at(16);
        let position = u64::from_str_radix(position, 16).map_err(|_| RecordError::InvalidCursor)?;
        let hash = u64::from_str_radix(hash, 16).map_err(|_| RecordError::InvalidCursor)?;
        // Positions are SQLite integers: anything beyond i64 was never issued.
        if hash != fnv1a(binding) || i64::try_from(position).is_err() {
            return Err(RecordError::InvalidCursor);
        }
        Ok(Self { position })
    }
}
