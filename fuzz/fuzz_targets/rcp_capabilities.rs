//! RCP capability decoding from JSON: no panic, and what decodes re-encodes to a value that
//! decodes to the same capabilities.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rcip_rcp::Capabilities;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let strict = Capabilities::from_value(value.clone());
    let lenient = Capabilities::decode(value);
    if let Ok(caps) = strict {
        let again = Capabilities::from_value(caps.to_value()).expect("re-encoded decodes");
        assert_eq!(again, caps);
        for key in caps.vendor_keys() {
            assert!(caps.supports_vendor(key), "{key}");
        }
    }
    if let Ok((caps, _problems)) = lenient {
        let _ = caps.to_value();
        let _: Vec<_> = caps.advertised().collect();
    }
});
