//! The one-version-one-content rule that the engine and every directory store apply when a
//! program version is activated.

/// What activating a version would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// The version is new: store it.
    New,
    /// The same version with the same content is already active: nothing to do.
    AlreadyActive,
}

/// A content pinned at the namespace/version being activated, as [`pin_rule`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Pin<'a> {
    /// Installed (seen by every workspace), rather than a workspace's own.
    pub installed: bool,
    /// Its content's digest.
    pub digest: &'a str,
}

/// [`pin_rule`]'s refusal: other content is pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinConflict;

/// The one-version-one-content rule, for the directory's stores and the engine alike.
/// `pins` are the contents pinned at the same namespace/version that the activation may
/// conflict with: for a workspace's activation, the installed ones and the workspace's own;
/// for an installation (`installing`), every workspace's too, since every workspace would
/// see it. Other content anywhere there: a conflict. The same content where the activation
/// goes (for an installation: among the installed): already active. Otherwise new (the
/// same content in a workspace only is still to be installed).
pub fn pin_rule<'a>(
    pins: impl IntoIterator<Item = Pin<'a>>,
    installing: bool,
    digest: &str,
) -> Result<Activation, PinConflict> {
    let mut outcome = Activation::New;
    for pin in pins {
        if pin.digest != digest {
            return Err(PinConflict);
        }
        if pin.installed || !installing {
            outcome = Activation::AlreadyActive;
        }
    }
    Ok(outcome)
}
