//! Compiles the MCPL 0.5 vocabulary rcip ships (`vocabularies/mcpl-0.5.json`) with
//! `rcip-build`, into `rcip_runtime::mcpl`. (rcip-core cannot do this: rcip-build depends on it.)
fn main() {
    rcip_build::VocabularyFile::new("vocabularies/mcpl-0.5.json")
        .crate_path("crate")
        .compile_or_fail();
}
