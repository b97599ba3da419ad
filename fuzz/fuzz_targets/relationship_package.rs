//! `parse_package` on the bytes as text and, when they are JSON, `validate_package`: no
//! panic, both agree, and every problem's pointer resolves in the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcip_relationship::{parse_package, validate_package};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_package(text);
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        assert!(parsed.is_err(), "non-JSON text parsed as a package");
        return;
    };
    let validated = validate_package(&value);
    assert_eq!(parsed.is_ok(), validated.is_ok());
    if let Err(error) = validated {
        assert!(!error.problems.is_empty(), "a rejection without problems");
        for problem in &error.problems {
            // Missing keys are reported at the object that lacks them, so every pointer
            // names a value that exists.
            assert!(
                value.pointer(&problem.pointer).is_some(),
                "pointer {:?} ({}) does not resolve",
                problem.pointer,
                problem.code.as_str()
            );
        }
    }
});
