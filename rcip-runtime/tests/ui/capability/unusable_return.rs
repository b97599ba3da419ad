use rcip_runtime::capability;

struct NotAnError;

struct NotSerializable;

/// The error converts into no handler failure.
#[capability(effect = "read")]
fn fallible() -> Result<u32, NotAnError> {
    Ok(1)
}

/// The output has no schema.
#[capability(effect = "read")]
fn plain() -> NotSerializable {
    NotSerializable
}

fn main() {}
