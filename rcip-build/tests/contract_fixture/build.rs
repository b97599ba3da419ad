//! Checks the committed catalog export against the contract lock.
fn main() {
    rcip_build::Contract::new("app.catalog.json")
        .lock("app.contract.lock")
        .export_command("cargo run -- export > app.catalog.json")
        .check_or_fail();
}
