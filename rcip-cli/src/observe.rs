//! What `rcip serve` tells an operator beside its answers: the log (stderr, filtered by
//! `RCIP_LOG`), Prometheus metrics (`--metrics-bind`, `--metrics-path`) and, built with the
//! `otel` feature, OpenTelemetry traces over OTLP (`--otlp-endpoint`).

use std::sync::Arc;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use rcip_server::axum::Router;
use rcip_server::axum::http::header;
use rcip_server::axum::response::IntoResponse;
use rcip_server::axum::routing::get;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The log filter when `RCIP_LOG` is unset: warnings and errors.
const DEFAULT_LOG: &str = "warn";

/// Latency buckets, in seconds: from a cached read (1 ms) to the request timeout (30 s).
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];

/// Kept until exit: flushes the traces still buffered when dropped.
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("rcip serve: the last traces could not be sent: {error}");
        }
    }
}

/// Installs the log on stderr and, with an OTLP endpoint, the trace exporter (spans of
/// targets `rcip*` down to DEBUG: requests, operations, invocations, store statements).
pub(crate) fn telemetry(otlp_endpoint: Option<&str>) -> Result<Telemetry, String> {
    let filter = EnvFilter::try_from_env("RCIP_LOG")
        .or_else(|_| EnvFilter::try_new(DEFAULT_LOG))
        .map_err(|e| format!("RCIP_LOG: {e}"))?;
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter);
    #[cfg(feature = "otel")]
    {
        let (otel, provider) = match otlp_endpoint {
            Some(endpoint) => {
                let (layer, provider) = otlp(endpoint)?;
                (Some(layer), Some(provider))
            }
            None => (None, None),
        };
        tracing_subscriber::registry()
            .with(log)
            .with(otel)
            .try_init()
            .map_err(|e| e.to_string())?;
        Ok(Telemetry { provider })
    }
    #[cfg(not(feature = "otel"))]
    {
        if otlp_endpoint.is_some() {
            return Err(
                "--otlp-endpoint: this rcip was built without the `otel` feature".to_owned(),
            );
        }
        tracing_subscriber::registry()
            .with(log)
            .try_init()
            .map_err(|e| e.to_string())?;
        Ok(Telemetry {})
    }
}

/// The OTLP/HTTP (protobuf) span exporter to `endpoint`, batched, behind a layer that takes
/// rcip's spans down to DEBUG.
#[cfg(feature = "otel")]
fn otlp<S>(
    endpoint: &str,
) -> Result<
    (
        Box<dyn Layer<S> + Send + Sync>,
        opentelemetry_sdk::trace::SdkTracerProvider,
    ),
    String,
>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a> + Send + Sync,
{
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::WithExportConfig as _;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| format!("--otlp-endpoint {endpoint}: {e}"))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("rcip")
        .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("rcip"))
        .with_filter(
            tracing_subscriber::filter::Targets::new().with_target("rcip", tracing::Level::DEBUG),
        );
    Ok((Box::new(layer), provider))
}

/// The Prometheus recorder, installed for the process, and a task that keeps its
/// histograms drained.
pub(crate) fn prometheus() -> Result<PrometheusHandle, String> {
    let handle = PrometheusBuilder::new()
        .set_buckets(&BUCKETS)
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| format!("the metrics recorder: {e}"))?;
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

/// `GET path`: the metrics in Prometheus's text format, with `refresh` run first (it sets
/// the gauges read at scrape time: the pools' use).
pub(crate) fn metrics_router(
    path: &str,
    handle: PrometheusHandle,
    refresh: Arc<dyn Fn() + Send + Sync>,
) -> Router {
    Router::new().route(
        path,
        get(move || {
            let (handle, refresh) = (handle.clone(), Arc::clone(&refresh));
            async move {
                refresh();
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    handle.render(),
                )
                    .into_response()
            }
        }),
    )
}
