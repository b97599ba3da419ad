//! Loading an issuer's keys: what a JWKS must hold, and the command line's form.
#![allow(clippy::unwrap_used)]

use rcip_server::Issuer;

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_command_line_form_names_issuer_and_file() {
    let spec = format!(
        "https://issuer.example/t=1={}",
        fixture_path("issuer-jwks.json")
    );
    // Split at the last `=`: the issuer keeps its own.
    assert_eq!(
        Issuer::from_spec(&spec).unwrap().issuer(),
        "https://issuer.example/t=1"
    );
    let missing = Issuer::from_spec("https://issuer.example=/nonexistent/jwks.json").unwrap_err();
    assert!(missing.message.starts_with("cannot read"), "{missing}");
    let spec = format!(
        "https://issuer.example?t=1={}",
        fixture_path("issuer-jwks.json")
    );
    assert_eq!(
        Issuer::from_spec(&spec).unwrap().issuer(),
        "https://issuer.example?t=1"
    );
    for bad in ["no-equals-sign", "=file.json", "https://issuer.example="] {
        let error = Issuer::from_spec(bad).unwrap_err();
        assert_eq!(error.message, "expected ISSUER=JWKS_FILE", "{bad}");
    }
}

#[test]
fn a_jwks_needs_a_usable_signing_key() {
    let refused = |jwks: &str| {
        Issuer::from_jwks("https://i.example", jwks)
            .unwrap_err()
            .message
    };
    assert!(refused("not json").starts_with("not a JWKS document"));
    assert_eq!(refused(r#"{"keys": []}"#), "the JWKS holds no signing key");
    // A symmetric key and an encryption key are left out: nothing usable remains.
    let only_unusable = r#"{"keys": [
        {"kty": "oct", "kid": "h", "k": "c2VjcmV0"},
        {"kty": "OKP", "kid": "e", "use": "enc", "crv": "Ed25519",
         "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    ]}"#;
    assert_eq!(refused(only_unusable), "the JWKS holds no signing key");
    let two_without_kid = r#"{"keys": [
        {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
        {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    ]}"#;
    assert_eq!(
        refused(two_without_kid),
        "with several keys, every key needs a `kid`"
    );
    let one = r#"{"keys": [
        {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    ]}"#;
    assert!(Issuer::from_jwks("https://i.example", one).is_ok());
    let json = std::fs::read_to_string(fixture_path("issuer-jwks.json")).unwrap();
    assert!(
        format!(
            "{:?}",
            Issuer::from_jwks("https://i.example", &json).unwrap()
        )
        .contains("rsa-1")
    );
}
