//! An invocation id as a handler's context holds it: a generated one in place, a caller's
//! shared.
//!
//! Every invocation without a caller's id gets a generated one. The reservation holds its
//! text (which becomes the outcome's); the handler's context holds a copy in place, so
//! handing the id to the handler costs no allocation and no reference count. A caller's
//! id, of any length, stays the one allocation the reservation table holds.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// The longest id held in place: a generated id is at most 38 bytes (`invocation_`, a
/// `u64` in base 36, `_`, another).
const INLINE: usize = 38;

/// An invocation id. Reads as the `str` it is.
#[derive(Clone)]
pub(crate) enum InvocationId {
    /// Short text held in place (`len` bytes of `bytes`, copied from a `str`).
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Any other id.
    Shared(Arc<str>),
}

impl InvocationId {
    /// `text`, in place if it is short enough.
    pub(crate) fn new(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                InvocationId::Inline { len, bytes }
            }
            _ => InvocationId::Shared(Arc::from(text)),
        }
    }
}

impl Deref for InvocationId {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            // The bytes were copied whole from a `str`, so they are UTF-8: the check cannot
            // fail (it is kept rather than an `unsafe` conversion; ids are read a few times
            // per invocation, and short).
            InvocationId::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            InvocationId::Shared(id) => id,
        }
    }
}

impl fmt::Debug for InvocationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_are_held_in_place_and_read_back_whole() {
        for text in ["", "a", "invocation_mgx3k2ab_1", "é·ü", &"x".repeat(INLINE)] {
            let id = InvocationId::new(text);
            assert!(matches!(id, InvocationId::Inline { .. }), "{text}");
            assert_eq!(&*id, text);
            assert_eq!(&*id.clone(), text);
        }
    }

    #[test]
    fn the_longest_generated_id_fits_in_place() {
        let longest = crate::support::sequenced_id(
            crate::support::INVOCATION_ID_PREFIX,
            u64::MAX,
            u64::MAX - 1,
            str::to_owned,
        );
        assert_eq!(longest.len(), INLINE);
        assert!(matches!(
            InvocationId::new(&longest),
            InvocationId::Inline { .. }
        ));
    }

    #[test]
    fn longer_ids_are_shared() {
        let text = "y".repeat(INLINE + 1);
        let id = InvocationId::new(&text);
        assert!(matches!(id, InvocationId::Shared(_)));
        assert_eq!(&*id, text);
        let id = InvocationId::new("caller-id");
        assert_eq!(format!("{id:?}"), "\"caller-id\"");
    }
}
