//! The Relationship Protocol platform on the network (this branch: the credentials only).
#![deny(missing_docs)]

pub mod authenticate;
pub mod credentials;
pub mod tokens;

pub use authenticate::{AuthFuture, AuthRefusal, Authenticate, Authenticated, Door};

pub use credentials::{Credentials, CredentialsConfig, Issuer, console_router};
pub use tokens::TokenStore;
