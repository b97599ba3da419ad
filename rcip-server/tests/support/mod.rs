//! What the credential tests share: temporary SQLite files, JWTs signed with the
//! committed test keys (tests/fixtures), and a console session signed in with a real
//! ticket. Not every test file uses every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcip_server::Issuer;
use rcip_server::tokens::{self, TokenStore};
use serde_json::Value;

pub use rcip_test_support::TempDb;

/// The test issuer, whose keys are `tests/fixtures/issuer-jwks.json` (kids `rsa-1`, `ec-1`,
/// `ed-1`; `rsa-other-private.pem` is a key it does not have).
pub const ISSUER: &str = "https://issuer.example";

/// A committed test fixture's text.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// [`ISSUER`] with its keys.
pub fn issuer() -> Issuer {
    Issuer::from_jwks(ISSUER, &fixture("issuer-jwks.json")).unwrap()
}

/// A JWT of `claims` signed with the fixture key `key_file`, its header naming `kid`.
pub fn sign(alg: Algorithm, key_file: &str, kid: Option<&str>, claims: &Value) -> String {
    let pem = fixture(key_file);
    let key = match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(pem.as_bytes()),
        Algorithm::ES256 => EncodingKey::from_ec_pem(pem.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
        other => panic!("no test key for {other:?}"),
    }
    .unwrap();
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

/// Base64url without padding, as a JWT's parts are encoded.
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Signs `principal` in at the service at `base` with a fresh ticket of `store`, as a
/// browser opening the link does: the cookie pair (`rcip_session=...`) and the whole
/// `Set-Cookie` header.
pub async fn sign_in(
    client: &reqwest::Client,
    base: &str,
    store: &dyn TokenStore,
    principal: &str,
) -> (String, String) {
    let ticket = tokens::issue_ticket(store, principal, Duration::from_secs(60))
        .await
        .unwrap();
    let response = client
        .get(format!("{base}{}", tokens::sign_in_path(&ticket)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    let page = response.text().await.unwrap();
    assert!(
        page.contains(&format!("Signed in as {principal}")),
        "{page}"
    );
    let pair = set_cookie.split(';').next().unwrap().to_owned();
    (pair, set_cookie)
}

/// The CSRF token of the session `cookie`, as the console's page script gets it.
pub async fn csrf_of(client: &reqwest::Client, base: &str, cookie: &str) -> String {
    let response = client
        .get(format!("{base}/console/session"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let value: Value = response.json().await.unwrap();
    value["csrf_token"].as_str().unwrap().to_owned()
}
