//! Writes the agent corpus (`rcip_examples::agent_corpus::full_corpus`: 54 Rust input types,
//! the polls example's catalog and the hiring package) as each profile's tool list, one file a
//! profile, for the provider SDKs' own checkers (`tests/interop/agent-schemas.sh`):
//!
//! ```text
//! cargo run -p rcip-examples --example agent_exports -- target/interop/exports
//! ```

use std::path::PathBuf;

use rcip_examples::agent_corpus::full_corpus;
use rcip_export::{Profile, export_definition};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: agent_exports OUT_DIR")?,
    );
    std::fs::create_dir_all(&dir)?;
    let definition = full_corpus();
    for profile in Profile::ALL {
        let tools = export_definition(profile, &definition)?.to_json();
        let path = dir.join(format!("{profile}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&tools)?)?;
        println!(
            "{profile}: {} capabilities -> {}",
            definition.capabilities.len(),
            path.display()
        );
    }
    Ok(())
}
