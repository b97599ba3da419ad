//! The strict-schema checker on parsed JSON: any value gives `Ok` or a violation whose
//! pointer resolves in the schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcip_core::schema::check_strict;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Err(violation) = check_strict(&schema) {
        assert!(
            schema.pointer(&violation.pointer).is_some(),
            "pointer {:?} does not resolve: {violation:?}",
            violation.pointer
        );
    }
});
