//! Every store call in a tracing span of its own.

use std::future::Future;

use rcip_records::StoreFuture;

/// `work` inside a span of its own, `db` (target `rcip::store`, level DEBUG) with
/// `db.system.name` and the statement's short name as `db.operation.name` and `otel.name`, so
/// that a trace shows each store call under the operation that made it. The span is made
/// here, in the caller's span, so it is the caller's child even when the work runs elsewhere
/// (SQLite's thread); with no subscriber interested it costs one check.
pub(crate) fn traced<'a, T>(
    system: &'static str,
    name: &'static str,
    work: impl Future<Output = T> + Send + 'a,
) -> StoreFuture<'a, T> {
    use tracing::Instrument;
    let span = tracing::debug_span!(
        target: "rcip::store",
        "db",
        db.system.name = system,
        db.operation.name = name,
        otel.name = name,
    );
    Box::pin(work.instrument(span))
}
