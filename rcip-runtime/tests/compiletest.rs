//! trybuild UI tests of `#[capability]`: each `tests/ui/capability/*.rs` makes one mistake
//! (`several_mistakes.rs` makes several, all reported in one compile) and its `.stderr` holds
//! the expected diagnostics; `tests/ui/pass/*.rs` must compile and run. The expected output
//! is rustc 1.95's: regenerate with `TRYBUILD=overwrite cargo test -p rcip-runtime --test
//! compiletest` after a toolchain change, and read the diff.

#[test]
fn capability_attribute() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/capability/*.rs");
    cases.compile_fail("tests/ui/catalog/*.rs");
    cases.compile_fail("tests/ui/derive/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
