//! Compiles the relationship program packages in `programs/` for the examples.
fn main() {
    rcip_build::Programs::new("programs").compile_or_fail();
}
