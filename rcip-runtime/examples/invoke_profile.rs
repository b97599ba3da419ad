//! One round-two arm in a loop, for instruction counts: run it under
//! `valgrind --tool=callgrind` (or `perf stat`), one arm per process, and divide by the count.
//!
//! Run: `cargo run --release -p rcip-runtime --example invoke_profile -- ARM [COUNT]`, where
//! ARM is one of `invoke-value`, `invoke-text`, `floor-value`, `floor-text`, `preflight`,
//! `preflight-shared` (the batch's inputs shared, its ids
//! copied), `preflight-held` (16 inputs built apart, each shared with its proposal and
//! kept; subtract `held-build`, which builds them alone), `derived-value`, `derived-text`, `macro-value`, `macro-text` (over `#[capability]`
//! functions bound by `catalog!`), `none` (the set-up alone, to subtract). The arms are the
//! bench's (`benches/round_two.rs`), on the same workload.
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../benches/support/workload.rs"]
mod workload;

use std::hint::black_box;

use rcip_runtime::*;
use workload::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let arm = args.next().unwrap_or_else(|| "invoke-value".to_owned());
    let count: u32 = args.next().map_or(100_000, |n| n.parse().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let value = input_value();
    let runtime = match arm.as_str() {
        "derived-value" | "derived-text" => derived_runtime(10),
        "macro-value" | "macro-text" => macro_runtime(),
        _ => bound_runtime(10),
    };
    let client = runtime.client();
    let id = id(5);
    let ids = batch16_ids();
    let shared = std::sync::Arc::new(value.clone());
    if arm == "size" {
        let future = client.invoke(InvocationRequest::new(
            id.as_str(),
            Input::Value(value.clone()),
        ));
        println!("invoke future: {} bytes", std::mem::size_of_val(&*future));
        return;
    }
    rt.block_on(async {
        for _ in 0..count {
            match arm.as_str() {
                "invoke-value" | "derived-value" | "macro-value" => {
                    let request = InvocationRequest::new(id.as_str(), Input::Value(value.clone()));
                    black_box(client.invoke(request).await);
                }
                "invoke-text" | "derived-text" | "macro-text" => {
                    let request = InvocationRequest::new(id.as_str(), Input::text(INPUT));
                    black_box(client.invoke(request).await);
                }
                "floor-value" => {
                    black_box(value_floor(&value).await);
                }
                "floor-text" => {
                    black_box(text_floor().await);
                }
                "preflight" => {
                    black_box(client.preflight(batch16(&value)).await.unwrap());
                }
                "preflight-shared" => {
                    black_box(
                        client
                            .preflight(batch16_shared(&ids, &shared))
                            .await
                            .unwrap(),
                    );
                }
                "held-build" => {
                    black_box(batch16_held(&ids));
                }
                "preflight-held" => {
                    let (batch, inputs) = batch16_held(&ids);
                    black_box(client.preflight(batch).await.unwrap());
                    drop(inputs);
                }
                "none" => {}
                other => panic!("unknown arm {other}"),
            }
        }
    });
}
