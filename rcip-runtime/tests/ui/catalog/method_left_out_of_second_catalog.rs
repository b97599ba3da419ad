//! Two catalogs over one block: the one that lists every method compiles, the one that
//! leaves a method out (listing the others out of order) is refused at its first listed
//! sibling, once.
use rcip_runtime::{capabilities, catalog};

struct Notes;

#[capabilities(module = notebook)]
impl Notes {
    /// Count the notes.
    #[capability(effect = "read", scope = "notes")]
    fn count(&self) -> u32 {
        0
    }

    /// Add a note.
    #[capability(effect = "write", scope = "notes")]
    fn add(&self) -> u32 {
        1
    }

    /// Clear the notes.
    #[capability(effect = "destructive", scope = "notes")]
    fn clear(&self) -> u32 {
        2
    }
}

/// Ping.
#[rcip_runtime::capability(effect = "read", scope = "notes")]
fn ping() {}

catalog! {
    struct Full {
        id = "full", name = "Full", description = "Everything.",
        scopes = [("notes", "Notes", "The notes.")],
        capabilities = [notebook::clear, ping, notebook::count, notebook::add],
    }
}

catalog! {
    struct Partial {
        id = "partial", name = "Partial", description = "Some of it.",
        scopes = [("notes", "Notes", "The notes.")],
        capabilities = [ping, notebook::add, notebook::clear],
    }
}

fn main() {}
