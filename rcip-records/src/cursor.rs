//! Opaque, tamper-evident paging cursors.
//!
//! A cursor is `c2`, the position after which the next page starts (16 hex digits) and a
//! 128-bit HMAC-SHA256 tag (32 hex digits) over that position, the workspace, what the
//! cursor was made for (the query's filters, the record of a history, the feed's namespace)
//! and the caller's principal id, under the engine's cursor key. An edited cursor, one from
//! another query, workspace or principal, or one made under another key is refused
//! (`INVALID_CURSOR`); clients can neither build nor edit cursors.

use std::fmt;

use hmac::{KeyInit, Mac};
use sha2::Sha256;

use super::error::RecordError;
use rcip_runtime::__private::shared::random_128;

// The capabilities' schemas declare the same bounds (`rcip_relationship`).
#[allow(clippy::cast_possible_truncation)] // 20 and 100
/// Items per page when no limit is given.
pub const DEFAULT_LIMIT: usize = rcip_relationship::DEFAULT_PAGE_LIMIT as usize;
#[allow(clippy::cast_possible_truncation)]
/// The largest page.
pub const MAX_LIMIT: usize = rcip_relationship::MAX_PAGE_LIMIT as usize;

type HmacSha256 = hmac::Hmac<Sha256>;

/// Bytes of the tag a cursor carries (a truncated HMAC-SHA256: 128 bits).
const TAG_BYTES: usize = 16;
const PREFIX: &str = "c2";

/// The secret cursors are tagged under. Instances that serve one database share it, so that
/// a cursor from one is accepted by the next.
#[derive(Clone)]
pub struct CursorKey([u8; 32]);

impl CursorKey {
    /// A key of 32 secret bytes.
    pub fn new(key: [u8; 32]) -> Self {
        Self(key)
    }

    /// A fresh random key: cursors then hold for this engine only.
    pub fn random() -> Self {
        let mut key = [0; 32];
        key[..16].copy_from_slice(&random_128());
        key[16..].copy_from_slice(&random_128());
        Self(key)
    }

    fn mac(&self, position: u64, scope: &CursorScope<'_>) -> HmacSha256 {
        // Infallible: HMAC takes keys of any length.
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        mac.update(PREFIX.as_bytes());
        mac.update(&position.to_be_bytes());
        // Each part with its length: no two scopes feed the same bytes.
        for part in [scope.workspace_id, scope.query, scope.principal] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }
}

impl fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

/// What a cursor is bound to.
#[derive(Debug, Clone, Copy)]
pub struct CursorScope<'a> {
    /// The workspace.
    pub workspace_id: &'a str,
    /// The query: its operation and filters.
    pub query: &'a str,
    /// The caller's principal id.
    pub principal: &'a str,
}

impl CursorKey {
    /// The cursor for `position` in `scope`, tagged.
    pub fn encode(&self, position: u64, scope: &CursorScope<'_>) -> String {
        let tag = self.mac(position, scope).finalize().into_bytes();
        let mut text = format!("{PREFIX}{position:016x}");
        for byte in &tag[..TAG_BYTES] {
            text.push_str(&format!("{byte:02x}"));
        }
        text
    }

    /// The position a page starts after: the cursor's, or 0 without one.
    pub fn after(&self, cursor: Option<&str>, scope: &CursorScope<'_>) -> Result<u64, RecordError> {
        cursor.map_or(Ok(0), |c| self.decode(c, scope))
    }

    fn decode(&self, text: &str, scope: &CursorScope<'_>) -> Result<u64, RecordError> {
        let digits = text
            .strip_prefix(PREFIX)
            // Exactly the digits `encode` writes: lower-case hex. `from_str_radix` alone
            // would take upper case and a leading `+`, edits of an issued cursor.
            .filter(|d| {
                d.len() == 16 + 2 * TAG_BYTES
                    && d.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            })
            .ok_or(RecordError::InvalidCursor)?;
        let (position, tag_hex) = digits.split_at(16);
        let position = u64::from_str_radix(position, 16).map_err(|_| RecordError::InvalidCursor)?;
        let mut tag = [0u8; TAG_BYTES];
        for (i, byte) in tag.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&tag_hex[2 * i..2 * i + 2], 16)
                .map_err(|_| RecordError::InvalidCursor)?;
        }
        // Constant time: the tag's bytes are not learnt one by one.
        self.mac(position, scope)
            .verify_truncated_left(&tag)
            .map_err(|_| RecordError::InvalidCursor)?;
        // Positions are SQLite integers: anything beyond i64 was never issued.
        if i64::try_from(position).is_err() {
            return Err(RecordError::InvalidCursor);
        }
        Ok(position)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn scope<'a>(workspace_id: &'a str, principal: &'a str) -> CursorScope<'a> {
        CursorScope {
            workspace_id,
            query: "search|{}",
            principal,
        }
    }

    #[test]
    fn a_cursor_holds_for_its_scope_and_key_only() {
        let key = CursorKey::new([7; 32]);
        let cursor = key.encode(41, &scope("w", "ada"));
        assert!(cursor.starts_with("c2000000000000002"));
        assert_eq!(key.after(Some(&cursor), &scope("w", "ada")), Ok(41));
        assert_eq!(key.after(None, &scope("w", "ada")), Ok(0));
        let refused = Err(RecordError::InvalidCursor);
        assert_eq!(key.after(Some(&cursor), &scope("w", "bob")), refused);
        assert_eq!(key.after(Some(&cursor), &scope("v", "ada")), refused);
        assert_eq!(
            CursorKey::new([8; 32]).after(Some(&cursor), &scope("w", "ada")),
            refused
        );
        assert_eq!(
            CursorKey::random().after(Some(&cursor), &scope("w", "ada")),
            refused
        );
        // Lengths are bound: moving a character between parts changes the tag.
        let split = CursorScope {
            workspace_id: "wa",
            query: "search|{}",
            principal: "da",
        };
        assert_eq!(key.after(Some(&cursor), &split), refused);
        // A multi-byte character in the tag is refused, not a panic.
        let odd = format!("{}\u{e9}{}", &cursor[..20], &cursor[22..]);
        assert_eq!(key.after(Some(&odd), &scope("w", "ada")), refused);
    }

    #[test]
    fn only_the_cursor_as_issued_is_taken() {
        let key = CursorKey::new([7; 32]);
        let at = scope("w", "ada");
        // A position and a tag with hex letters in both, so upper-casing changes each.
        let cursor = (0xabc..)
            .map(|position| key.encode(position, &at))
            .find(|c| {
                c[2..18].bytes().any(|b| b.is_ascii_alphabetic())
                    && c[18..].bytes().any(|b| b.is_ascii_alphabetic())
            })
            .unwrap();
        assert!(key.after(Some(&cursor), &at).is_ok());
        let refused = Err(RecordError::InvalidCursor);
        let upper = format!("c2{}", cursor[2..].to_ascii_uppercase());
        assert_eq!(key.after(Some(&upper), &at), refused);
        let tag_upper = format!("{}{}", &cursor[..18], cursor[18..].to_ascii_uppercase());
        assert_eq!(key.after(Some(&tag_upper), &at), refused);
        let signed = format!("c2+{}", &cursor[3..]);
        assert_eq!(key.after(Some(&signed), &at), refused);
    }

    #[test]
    fn the_debug_form_hides_the_key() {
        assert_eq!(format!("{:?}", CursorKey::new([1; 32])), "CursorKey(..)");
    }
}
