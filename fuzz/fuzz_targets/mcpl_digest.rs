//! The MCPL manifest digest on parsed JSON: no panic; canonical JSON re-parses to a value
//! with the same digest and the same canonical form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcip_mcpl::{manifest_canonical_json, manifest_digest};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let digest = manifest_digest(&value);
    let canonical = manifest_canonical_json(&value);
    assert_eq!(
        digest.is_ok(),
        canonical.is_ok(),
        "{digest:?} / {canonical:?}"
    );
    let (Ok(digest), Ok(canonical)) = (digest, canonical) else {
        return;
    };
    let reparsed: Value = serde_json::from_str(&canonical).expect("canonical JSON parses");
    assert_eq!(
        manifest_digest(&reparsed).as_deref(),
        Ok(digest.as_str()),
        "{canonical}"
    );
    assert_eq!(
        manifest_canonical_json(&reparsed).as_deref(),
        Ok(canonical.as_str())
    );
});
