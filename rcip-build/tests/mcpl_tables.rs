//! rcip-mcpl commits its MCPL 0.5 tables (`rcip-mcpl/src/mcpl_0_5.rs`) rather than
//! generating them in a build script, since this crate depends on rcip-mcpl. The check that
//! they are exactly what this crate makes of the vocabulary file now lives here, beside the
//! generator: in rcip-mcpl it would need a dev-dependency on this crate, a cycle that
//! `cargo publish` cannot order.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// `RCIP_BLESS=1 cargo test -p rcip-build --test mcpl_tables` rewrites the committed file.
#[test]
fn the_committed_mcpl_tables_are_current() {
    let mcpl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rcip-mcpl");
    let fresh = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcpl_0_5.rs");
    rcip_build::VocabularyFile::new(mcpl.join("vocabularies/mcpl-0.5.json"))
        .crate_path("crate")
        .output(&fresh)
        .compile()
        .unwrap();
    let fresh = std::fs::read_to_string(fresh).unwrap();
    let committed_path = mcpl.join("src/mcpl_0_5.rs");
    if std::env::var_os("RCIP_BLESS").is_some() {
        std::fs::write(&committed_path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(committed_path).unwrap();
    assert!(
        committed == fresh,
        "rcip-mcpl/src/mcpl_0_5.rs is stale: run RCIP_BLESS=1 cargo test -p rcip-build --test mcpl_tables"
    );
}
