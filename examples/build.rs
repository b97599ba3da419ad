//! Compiles the relationship program packages in `programs/` for the examples, and checks the
//! polls catalog's contract: `polls.catalog.json` (the committed export, which
//! `tests/polls_transcript.rs` keeps equal to the code's) against `polls.contract.lock` (the
//! last published contract). A breaking change fails the build unless the version's major
//! component moved or `RCIP_ACCEPT_BREAKING=1` rewrites the lock.
fn main() {
    rcip_build::Programs::new("programs").compile_or_fail();
    rcip_build::Contract::new("polls.catalog.json")
        .lock("polls.contract.lock")
        .export_command("cargo run --example polls -- export > examples/polls.catalog.json")
        .check_or_fail();
}
