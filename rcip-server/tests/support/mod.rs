//! What the credential and token tests share: temporary SQLite files and PostgreSQL
//! schemas (skipped with one line without `RCIP_TEST_POSTGRES_URL`), JWTs signed with the
//! committed test keys (tests/fixtures), and a console session signed in with a real
//! ticket. Not every test file uses every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;
use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcip_database::tokio_postgres;
use rcip_server::Issuer;
use rcip_server::tokens::{self, TokenStore};
use serde_json::Value;

/// The variable naming the PostgreSQL server.
pub const URL_VAR: &str = "RCIP_TEST_POSTGRES_URL";

fn random_hex() -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A SQLite file path of its own, removed (with its WAL files) when dropped.
#[derive(Debug)]
pub struct TempDb {
    pub path: PathBuf,
}

impl TempDb {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!("rcip-server-test-{}.db", random_hex()));
        Self { path }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.path.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The server's URL; `None` (after printing one `skipped:` line) when the variable is unset.
/// Unset under CI is a failure: CI must run these tests.
pub fn postgres_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VAR} is not set and CI is: CI must run the PostgreSQL tests"
            );
            static SKIP: Once = Once::new();
            SKIP.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: PostgreSQL tests ({URL_VAR} not set)"
                );
            });
            None
        }
    }
}

/// A PostgreSQL schema of its own, dropped (with its tables) when this is dropped.
#[derive(Debug)]
pub struct TestSchema {
    pub name: String,
    url: String,
}

impl TestSchema {
    /// A new schema, or `None` (skipped) without the variable.
    pub async fn create() -> Option<Self> {
        let url = postgres_url()?;
        let name = format!("rcip_server_test_{}", random_hex());
        let client = connect(&url.parse().unwrap()).await;
        client
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .unwrap();
        Some(Self { name, url })
    }

    /// A client configuration whose `search_path` is this schema.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config: tokio_postgres::Config = self.url.parse().unwrap();
        let options = match config.get_options() {
            Some(given) => format!("{given} -c search_path={}", self.name),
            None => format!("-c search_path={}", self.name),
        };
        config.options(options);
        config
    }

    /// A token store on this schema.
    pub async fn open(&self) -> rcip_database::PostgresTokenStore {
        rcip_database::PostgresTokenStore::open_with(self.config(), 2)
            .await
            .unwrap()
    }
}

async fn connect(config: &tokio_postgres::Config) -> tokio_postgres::Client {
    let (client, connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("{URL_VAR} is set but the server cannot be reached: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let config: tokio_postgres::Config = self.url.parse().unwrap();
        let statement = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name);
        // A runtime of its own on another thread: drop runs inside the test's runtime.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async {
                    let (client, connection) = config
                        .connect(tokio_postgres::NoTls)
                        .await
                        .map_err(|e| e.to_string())?;
                    tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    client
                        .batch_execute(&statement)
                        .await
                        .map_err(|e| e.to_string())
                })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) && !std::thread::panicking() {
            panic!("could not drop test schema {}: {dropped:?}", self.name);
        }
    }
}

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
