//! JWTs from configured issuers: the issuer's keys (a JWKS), `iss`, `aud` = this resource,
//! `exp`/`nbf`, `scope` -> delegated scopes, `sub` -> the agent's principal id.

use std::collections::BTreeSet;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use rcip_records::DelegatedScope;
use serde::Deserialize;

use super::refusal::{self, Refusal};

/// The algorithms a token may be signed with: asymmetric ones only. HMAC (`HS*`) is refused
/// because a resource server holding the issuer's secret could mint tokens itself, and
/// accepting it beside public keys invites key-confusion attacks.
const ACCEPTED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why an issuer's keys could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("issuer {issuer}: {message}")]
pub struct IssuerError {
    /// The issuer named.
    pub issuer: String,
    /// What is wrong.
    pub message: String,
}

/// A trusted token issuer and its public signing keys.
#[derive(Clone)]
pub struct Issuer {
    issuer: String,
    keys: Vec<IssuerKey>,
}

#[derive(Clone)]
struct IssuerKey {
    kid: Option<String>,
    /// The key's own `alg`, when the JWKS names one: then only that algorithm is accepted.
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    key: DecodingKey,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<_> = self.keys.iter().map(|k| k.kid.as_deref()).collect();
        f.debug_struct("Issuer")
            .field("issuer", &self.issuer)
            .field("kids", &kids)
            .finish()
    }
}

impl Issuer {
    /// The issuer `issuer` (the exact `iss` its tokens carry) with the keys of the JWKS
    /// document `jwks` (`{"keys": [...]}`). Encryption keys and symmetric (`oct`) keys are
    /// left out; at least one signing key must remain, and with several each needs a `kid`.
    ///
    /// # Errors
    ///
    /// The document does not parse, or holds no usable key.
    pub fn from_jwks(issuer: impl Into<String>, jwks: &str) -> Result<Self, IssuerError> {
        let issuer = issuer.into();
        let fail = |message: String| IssuerError {
            issuer: issuer.clone(),
            message,
        };
        let set: JwkSet =
            serde_json::from_str(jwks).map_err(|e| fail(format!("not a JWKS document: {e}")))?;
        let mut keys = Vec::new();
        for jwk in &set.keys {
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let family = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => AlgorithmFamily::Rsa,
                AlgorithmParameters::EllipticCurve(_) => AlgorithmFamily::Ec,
                AlgorithmParameters::OctetKeyPair(_) => AlgorithmFamily::Ed,
                // Symmetric keys (`oct`) and kinds this build does not know.
                _ => continue,
            };
            let alg = match jwk.common.key_algorithm {
                // The two enums spell their shared variants alike: go through that spelling.
                Some(named) => match serde_json::to_value(named)
                    .ok()
                    .and_then(|v| serde_json::from_value::<Algorithm>(v).ok())
                {
                    Some(alg) if ACCEPTED.contains(&alg) => Some(alg),
                    // An encryption algorithm or HMAC: not a key to verify tokens with.
                    _ => continue,
                },
                None => None,
            };
            let key = DecodingKey::from_jwk(jwk).map_err(|e| {
                fail(format!(
                    "key {:?} is not usable: {e}",
                    jwk.common.key_id.as_deref().unwrap_or("(no kid)")
                ))
            })?;
            keys.push(IssuerKey {
                kid: jwk.common.key_id.clone(),
                alg,
                family,
                key,
            });
        }
        if keys.is_empty() {
            return Err(fail("the JWKS holds no signing key".into()));
        }
        if keys.len() > 1 && keys.iter().any(|k| k.kid.is_none()) {
            return Err(fail("with several keys, every key needs a `kid`".into()));
        }
        Ok(Self { issuer, keys })
    }

    /// [`from_jwks`](Self::from_jwks) with the document read from `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or as [`from_jwks`](Self::from_jwks).
    pub fn from_jwks_file(
        issuer: impl Into<String>,
        path: impl AsRef<Path>,
    ) -> Result<Self, IssuerError> {
        let issuer = issuer.into();
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| IssuerError {
            issuer: issuer.clone(),
            message: format!("cannot read {}: {e}", path.display()),
        })?;
        Self::from_jwks(issuer, &text)
    }

    /// The command line's form, `ISSUER=JWKS_FILE` (split at the last `=`: an issuer URL
    /// may hold one in its query, a key file's name seldom does).
    ///
    /// # Errors
    ///
    /// No `=`, an empty side, or as [`from_jwks_file`](Self::from_jwks_file).
    pub fn from_spec(spec: &str) -> Result<Self, IssuerError> {
        match spec.rsplit_once('=') {
            Some((issuer, path)) if !issuer.is_empty() && !path.is_empty() => {
                Self::from_jwks_file(issuer, path)
            }
            _ => Err(IssuerError {
                issuer: spec.to_owned(),
                message: "expected ISSUER=JWKS_FILE".into(),
            }),
        }
    }

    /// The `iss` its tokens carry.
    #[must_use]
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
}

/// What a verified token says.
#[derive(Debug)]
pub(crate) struct Verified {
    pub(crate) subject: String,
    pub(crate) scopes: BTreeSet<DelegatedScope>,
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    scope: Option<String>,
}

/// The parts of a JWT read before its signature is checked: only to choose the issuer and
/// key, never trusted for anything else.
#[derive(Deserialize)]
struct UnverifiedHeader {
    alg: Option<String>,
    kid: Option<String>,
}

#[derive(Deserialize)]
struct UnverifiedClaims {
    iss: Option<serde_json::Value>,
}

fn decode_part<T: for<'de> Deserialize<'de>>(part: &str) -> Option<T> {
    let bytes = URL_SAFE_NO_PAD.decode(part).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Verifies `token` against `issuers` for the resource `audience`.
pub(crate) fn verify(
    token: &str,
    issuers: &[Issuer],
    audience: &str,
    leeway_seconds: u64,
) -> Result<Verified, Refusal> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refusal::INVALID_TOKEN);
    };
    let header: UnverifiedHeader = decode_part(header).ok_or(refusal::INVALID_TOKEN)?;
    let alg_name = header.alg.ok_or(refusal::TOKEN_ALGORITHM_REFUSED)?;
    // `none` (any case) and anything not on the list: refused before any key is looked at.
    let alg: Algorithm = alg_name
        .parse()
        .map_err(|_| refusal::TOKEN_ALGORITHM_REFUSED)?;
    if !ACCEPTED.contains(&alg) {
        return Err(refusal::TOKEN_ALGORITHM_REFUSED);
    }
    let claims: UnverifiedClaims = decode_part(payload).ok_or(refusal::INVALID_TOKEN)?;
    let Some(serde_json::Value::String(iss)) = claims.iss else {
        return Err(refusal::TOKEN_ISSUER_UNKNOWN);
    };
    let issuer = issuers
        .iter()
        .find(|i| i.issuer == iss)
        .ok_or(refusal::TOKEN_ISSUER_UNKNOWN)?;
    let key = match (&header.kid, issuer.keys.as_slice()) {
        (Some(kid), keys) => keys.iter().find(|k| k.kid.as_deref() == Some(kid.as_str())),
        // No `kid`: only an issuer with a single key leaves no doubt which one is meant.
        (None, [only]) => Some(only),
        (None, _) => None,
    }
    .ok_or(refusal::TOKEN_KEY_UNKNOWN)?;
    if key.family != alg.family() || key.alg.is_some_and(|named| named != alg) {
        return Err(refusal::TOKEN_ALGORITHM_REFUSED);
    }
    let mut validation = Validation::new(alg);
    validation.set_issuer(&[issuer.issuer.as_str()]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = leeway_seconds;
    let data = jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|e| match e
        .kind()
    {
        ErrorKind::InvalidSignature => refusal::TOKEN_SIGNATURE_INVALID,
        ErrorKind::ExpiredSignature => refusal::TOKEN_EXPIRED,
        ErrorKind::ImmatureSignature => refusal::TOKEN_NOT_YET_VALID,
        // A token that names no audience was not issued for this resource either.
        ErrorKind::InvalidAudience => refusal::TOKEN_AUDIENCE_INVALID,
        ErrorKind::MissingRequiredClaim(claim) if claim == "aud" => refusal::TOKEN_AUDIENCE_INVALID,
        ErrorKind::InvalidIssuer => refusal::TOKEN_ISSUER_UNKNOWN,
        ErrorKind::InvalidAlgorithm
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => refusal::TOKEN_ALGORITHM_REFUSED,
        _ => refusal::INVALID_TOKEN,
    })?;
    let subject = data
        .claims
        .sub
        .filter(|s| !s.is_empty() && !s.chars().any(char::is_control))
        .ok_or(refusal::INVALID_TOKEN)?;
    // Scopes this service does not define are ignored: an issuer serves many resources and
    // a token commonly carries scopes for others (`openid`, `email`, ...); only the ones
    // named here delegate anything, so ignoring the rest grants nothing extra.
    let scopes = data
        .claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    Ok(Verified { subject, scopes })
}
