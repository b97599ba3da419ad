//! The MCPL manifest digest over the 20 positive conformance vectors' inputs (canonicalization,
//! SHA-256 and base64url included). Criterion reports digests per second (throughput: 20
//! digests per iteration). The Python reference generator does about 5,200 per second on this
//! machine kind; the target is at least 50 times that (under 4 µs per digest).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcip_mcpl::manifest_digest;
use serde_json::Value;

fn digest(c: &mut Criterion) {
    let file: Value = serde_json::from_str(include_str!(
        "../tests/vectors/mcpl/manifest-digest-vectors.json"
    ))
    .unwrap();
    let inputs: Vec<Value> = file["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v.get("digest").is_some())
        .map(|v| v["input"].clone())
        .collect();
    assert_eq!(inputs.len(), 20);
    let mut group = c.benchmark_group("manifest_digest");
    group.throughput(Throughput::Elements(inputs.len() as u64));
    group.bench_function("20_positive_vectors", |b| {
        b.iter(|| {
            for input in &inputs {
                black_box(manifest_digest(black_box(input)).unwrap());
            }
        });
    });
    group.finish();
}

criterion_group!(benches, digest);
criterion_main!(benches);
