//! JSON Pointers (RFC 6901), as every problem and violation in this crate reports places.

/// Appends one reference token to `pointer`: `/` then the token with `~` as `~0` and `/` as
/// `~1`.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::push_token;

    #[test]
    fn tokens_are_escaped() {
        let mut pointer = String::from("/a");
        push_token(&mut pointer, "b/c~d");
        assert_eq!(pointer, "/a/b~1c~0d");
    }
}
