//! Assist's input pipeline (the reference's section 6.7): processors in order, `None`
//! consuming the input, the four failure codes, one cancellation token from the first
//! processor to the end of the turn, and the voice adapter's start and stop.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rcip_assist::*;
use rcip_runtime::BoxFuture;
use tokio_util::sync::CancellationToken;

/// Appends `tag` to text, recording the order and what each processor was given.
fn tagger(
    tag: &'static str,
    log: Arc<Mutex<Vec<(String, InputOrigin, usize)>>>,
) -> impl InputProcessor {
    processor(tag, move |input: AssistInput, context: InputContext| {
        log.lock().unwrap().push((
            tag.to_owned(),
            context.origin,
            context.snapshot.capabilities.len(),
        ));
        async move {
            Ok::<_, BoxError>(Some(match input {
                AssistInput::Text(text) => AssistInput::Text(format!("{text} {tag}")),
                audio => audio,
            }))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn processors_run_in_order_and_see_the_filtered_snapshot() {
    let app = notes_app();
    let script = Script::default();
    let log = Arc::new(Mutex::new(Vec::new()));
    let assist = builder(&app, &script)
        .processor(tagger("first", log.clone()))
        .processor(tagger("second", log.clone()))
        .build();
    let report = turn(assist.send("hello").await);
    assert_eq!(report.ending, TurnEnding::Answered);
    assert_eq!(
        script.requests()[0].messages[0].content,
        "hello first second"
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            ("first".to_owned(), InputOrigin::Composer, 1),
            ("second".to_owned(), InputOrigin::Composer, 1)
        ],
        "read-only mode: processors see the read capability only"
    );
    assert_eq!(assist.input_status(), InputStatus::Idle);

    // Interactive mode: the whole snapshot.
    let log = Arc::new(Mutex::new(Vec::new()));
    let assist = builder(&app, &script)
        .mode(AssistMode::Interactive)
        .processor(tagger("only", log.clone()))
        .build();
    turn(assist.send("hi").await);
    assert_eq!(log.lock().unwrap()[0].2, 4);
}

#[tokio::test(start_paused = true)]
async fn none_consumes_the_input() {
    let app = notes_app();
    let script = Script::default();
    let log = Arc::new(Mutex::new(Vec::new()));
    let assist = builder(&app, &script)
        .processor(processor(
            "swallow",
            |_: AssistInput, _: InputContext| async { Ok::<_, BoxError>(None) },
        ))
        .processor(tagger("after", log.clone()))
        .build();
    assert_eq!(assist.send("shortcut").await, Submission::Consumed);
    assert!(script.requests().is_empty(), "no turn");
    assert!(
        log.lock().unwrap().is_empty(),
        "later processors do not run"
    );
    assert!(assist.transcript().is_empty());
    assert!(!assist.is_busy());
}

#[tokio::test(start_paused = true)]
async fn a_processor_that_leaves_blank_text_starts_no_turn() {
    let app = notes_app();
    let script = Script::default();
    let assist = builder(&app, &script)
        .processor(processor(
            "blank",
            |_: AssistInput, _: InputContext| async {
                Ok::<_, BoxError>(Some(AssistInput::Text("  ".into())))
            },
        ))
        .build();
    assert_eq!(assist.send("x").await, Submission::Ignored);
    assert!(script.requests().is_empty());
}

async fn failure_of(assist: &Assist, input: AssistInput) -> InputFailure {
    match assist.submit(input, InputOrigin::Composer).await {
        Submission::Failed(failure) => failure,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_four_failure_codes_and_their_messages() {
    let app = notes_app();
    let script = Script::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let counting = {
        let ran = ran.clone();
        move |input: AssistInput, _: InputContext| {
            ran.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, BoxError>(Some(input)) }
        }
    };

    // A blank id, before it runs.
    let assist = builder(&app, &script)
        .processor(processor(" ", counting.clone()))
        .build();
    let failure = failure_of(&assist, AssistInput::Text("hi".into())).await;
    assert_eq!(failure.code, InputFailureCode::InputProcessorFailed);
    assert_eq!(
        failure.message,
        "An Assist input processor is missing its identifier."
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(assist.input_status(), InputStatus::Error);
    assert_eq!(assist.input_error(), Some(failure));
    assert!(!assist.is_busy());

    // An error names the processor; the next input clears the error.
    let assist = builder(&app, &script)
        .processor(processor(
            "transcriber",
            |_: AssistInput, _: InputContext| async {
                Err::<Option<AssistInput>, _>(BoxError::from("service unavailable"))
            },
        ))
        .processor(processor("never", counting.clone()))
        .build();
    let failure = failure_of(&assist, AssistInput::Text("hi".into())).await;
    assert_eq!(failure.code, InputFailureCode::InputProcessorFailed);
    assert_eq!(
        failure.message,
        "The input processor \"transcriber\" could not complete."
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);

    // A panic is an unknown failure; the process and the controller carry on.
    let assist = builder(&app, &script)
        .processor(processor(
            "buggy",
            |_: AssistInput, _: InputContext| async {
                panic!("bug");
                #[allow(unreachable_code)]
                Ok::<Option<AssistInput>, BoxError>(None)
            },
        ))
        .build();
    let failure = failure_of(&assist, AssistInput::Text("hi".into())).await;
    assert_eq!(failure.code, InputFailureCode::InputProcessorFailed);
    assert_eq!(
        failure.message,
        "The Assist input pipeline could not complete."
    );
    assert!(!assist.is_busy());

    // Audio nobody transcribed.
    let assist = builder(&app, &script)
        .processor(processor("noop", counting.clone()))
        .build();
    let audio = AssistInput::Audio {
        data: vec![1, 2, 3],
        mime_type: "audio/webm".into(),
    };
    let failure = failure_of(&assist, audio.clone()).await;
    assert_eq!(failure.code, InputFailureCode::InputPipelineIncomplete);
    assert_eq!(
        failure.message,
        "The input pipeline must produce text before Assist can continue."
    );
    assert!(script.requests().is_empty());

    // A transcriber turns it into a turn.
    let assist = builder(&app, &script)
        .processor(processor(
            "stt",
            |input: AssistInput, _: InputContext| async move {
                let AssistInput::Audio { data, mime_type } = input else {
                    return Ok::<_, BoxError>(Some(input));
                };
                Ok(Some(AssistInput::Text(format!(
                    "{} bytes of {mime_type}",
                    data.len()
                ))))
            },
        ))
        .build();
    let report = turn(assist.submit(audio, InputOrigin::Voice).await);
    assert_eq!(report.ending, TurnEnding::Answered);
    assert_eq!(
        script.requests()[0].messages[0].content,
        "3 bytes of audio/webm"
    );

    // Displayed with the wire code.
    assert_eq!(
        failure.to_string(),
        "INPUT_PIPELINE_INCOMPLETE: The input pipeline must produce text before Assist can continue."
    );
    // The codes serialize as the reference's.
    assert_eq!(
        serde_json::to_value(InputFailureCode::VoiceStopFailed).unwrap(),
        "VOICE_STOP_FAILED"
    );
}

#[tokio::test(start_paused = true)]
async fn one_token_covers_the_pipeline_and_the_turn() {
    let app = notes_app();
    // A processor that waits for cancellation.
    let script = Script::default();
    let assist = builder(&app, &script)
        .processor(processor(
            "slow",
            |_: AssistInput, context: InputContext| async move {
                context.cancellation.cancelled().await;
                Err::<Option<AssistInput>, _>(BoxError::from("aborted"))
            },
        ))
        .build();
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("hi").await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(assist.input_status(), InputStatus::Processing);
    assert!(assist.is_busy());
    assert_eq!(assist.send("other").await, Submission::Ignored);
    assist.cancel();
    assert_eq!(running.await.unwrap(), Submission::Cancelled);
    assert_eq!(assist.input_status(), InputStatus::Idle, "not an error");
    assert_eq!(assist.input_error(), None);
    assert!(script.requests().is_empty());
    assert!(!assist.is_busy());

    // The processor's token is the turn's.
    let seen = Arc::new(Mutex::new(None::<CancellationToken>));
    let script = Script::new([Answer::Hang]);
    let assist = builder(&app, &script)
        .processor(processor("keep", {
            let seen = seen.clone();
            move |input: AssistInput, context: InputContext| {
                *seen.lock().unwrap() = Some(context.cancellation);
                async move { Ok::<_, BoxError>(Some(input)) }
            }
        }))
        .build();
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("hi").await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    let token = seen.lock().unwrap().clone().unwrap();
    assert!(!token.is_cancelled());
    assist.cancel();
    assert_eq!(turn(running.await.unwrap()).ending, TurnEnding::Cancelled);
    assert!(token.is_cancelled());
}

/// A voice adapter whose start and stop results the test sets.
#[derive(Clone, Default)]
struct Mic {
    fail_start: bool,
    fail_stop: bool,
    heard: Option<AssistInput>,
    cancelled: Arc<AtomicUsize>,
}

impl VoiceAdapter for Mic {
    fn start(&self, _: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        let fail = self.fail_start;
        Box::pin(async move {
            if fail {
                Err(BoxError::from("no microphone"))
            } else {
                Ok(())
            }
        })
    }

    fn stop(&self, _: CancellationToken) -> BoxFuture<Result<Option<AssistInput>, BoxError>> {
        let (fail, heard) = (self.fail_stop, self.heard.clone());
        Box::pin(async move {
            if fail {
                Err(BoxError::from("encoder crashed"))
            } else {
                Ok(heard)
            }
        })
    }

    fn cancel(&self) {
        self.cancelled.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn voice_goes_through_the_processors_with_origin_voice() {
    let app = notes_app();
    let script = Script::default();
    let log = Arc::new(Mutex::new(Vec::new()));

    let assist = builder(&app, &script).build();
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Unavailable));

    let mic = Mic {
        heard: Some(AssistInput::Text("list my notes".into())),
        ..Mic::default()
    };
    let assist = builder(&app, &script)
        .voice(mic.clone())
        .processor(tagger("p", log.clone()))
        .build();
    assert_eq!(
        assist.stop_voice().await,
        Submission::Ignored,
        "not listening"
    );
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Listening));
    assert_eq!(assist.input_status(), InputStatus::Listening);
    assert!(assist.is_busy());
    assert_eq!(assist.send("typed").await, Submission::Ignored);
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Busy));
    let report = turn(assist.stop_voice().await);
    assert_eq!(report.ending, TurnEnding::Answered);
    assert_eq!(script.requests()[0].messages[0].content, "list my notes p");
    assert_eq!(log.lock().unwrap()[0].1, InputOrigin::Voice);
    assert!(!assist.is_busy());
    assert_eq!(assist.input_status(), InputStatus::Idle);

    // Nothing heard: consumed.
    let quiet = builder(&app, &script).voice(Mic::default()).build();
    quiet.start_voice().await.unwrap();
    assert_eq!(quiet.stop_voice().await, Submission::Consumed);

    // Cancelling a recording calls the adapter's cancel and frees the controller.
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Listening));
    assist.cancel();
    assert_eq!(mic.cancelled.load(Ordering::SeqCst), 1);
    assert!(!assist.is_busy());
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert_eq!(assist.stop_voice().await, Submission::Ignored);
}

#[tokio::test(start_paused = true)]
async fn voice_failures_have_their_codes() {
    let app = notes_app();
    let script = Script::default();
    let assist = builder(&app, &script)
        .voice(Mic {
            fail_start: true,
            ..Mic::default()
        })
        .build();
    let failure = assist.start_voice().await.unwrap_err();
    assert_eq!(failure.code, InputFailureCode::VoiceStartFailed);
    assert_eq!(failure.message, "Voice input could not start.");
    assert_eq!(assist.input_status(), InputStatus::Error);
    assert!(!assist.is_busy());

    let assist = builder(&app, &script)
        .voice(Mic {
            fail_stop: true,
            ..Mic::default()
        })
        .build();
    assist.start_voice().await.unwrap();
    let Submission::Failed(failure) = assist.stop_voice().await else {
        panic!("expected a failure");
    };
    assert_eq!(failure.code, InputFailureCode::VoiceStopFailed);
    assert_eq!(failure.message, "Voice input could not be processed.");
    assert_eq!(assist.input_error(), Some(failure));
    assert!(!assist.is_busy());
    assert!(script.requests().is_empty());
}

/// A voice adapter whose start or stop hangs until cancelled, and whose `cancel` may panic.
#[derive(Clone, Default)]
struct SlowMic {
    hang_start: bool,
    panicking_cancel: bool,
    cancelled: Arc<AtomicUsize>,
}

impl VoiceAdapter for SlowMic {
    fn start(&self, _: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        let hang = self.hang_start;
        Box::pin(async move {
            if hang {
                std::future::pending::<()>().await;
            }
            Ok(())
        })
    }

    fn stop(&self, _: CancellationToken) -> BoxFuture<Result<Option<AssistInput>, BoxError>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(Some(AssistInput::Text("heard".into())))
        })
    }

    fn cancel(&self) {
        self.cancelled.fetch_add(1, Ordering::SeqCst);
        assert!(!self.panicking_cancel, "the adapter's cancel panics");
    }
}

#[tokio::test(start_paused = true)]
async fn voice_ends_cleanly_however_it_is_interrupted() {
    let app = notes_app();
    let script = Script::default();

    // Cancelled while starting.
    let mic = SlowMic {
        hang_start: true,
        ..SlowMic::default()
    };
    let assist = builder(&app, &script).voice(mic.clone()).build();
    let starting = tokio::spawn({
        let assist = assist.clone();
        async move { assist.start_voice().await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(assist.input_status(), InputStatus::Starting);
    assist.cancel();
    assert_eq!(starting.await.unwrap(), Ok(VoiceStart::Cancelled));
    assert_eq!(mic.cancelled.load(Ordering::SeqCst), 1);
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert!(!assist.is_busy());

    // The start future dropped.
    let dropped = assist.start_voice();
    tokio::select! {
        _ = dropped => panic!("start hangs"),
        () = tokio::time::sleep(Duration::from_millis(5)) => {}
    }
    assert_eq!(mic.cancelled.load(Ordering::SeqCst), 2);
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert!(!assist.is_busy());

    // Two stops at once: one stops, the other is ignored.
    let mic = SlowMic::default();
    let assist = builder(&app, &script).voice(mic.clone()).build();
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Listening));
    let (first, second) = tokio::join!(assist.stop_voice(), assist.stop_voice());
    assert!(matches!(first, Submission::Turn(_)), "{first:?}");
    assert_eq!(second, Submission::Ignored);
    assert_eq!(
        mic.cancelled.load(Ordering::SeqCst),
        0,
        "stopped, not abandoned"
    );

    // An adapter whose cancel panics cannot wedge the controller.
    let mic = SlowMic {
        panicking_cancel: true,
        ..SlowMic::default()
    };
    let assist = builder(&app, &script).voice(mic.clone()).build();
    assist.start_voice().await.unwrap();
    assist.cancel();
    assert_eq!(mic.cancelled.load(Ordering::SeqCst), 1);
    assert!(!assist.is_busy());
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Listening));

    // The last handle dropped while listening abandons the recording.
    let mic = SlowMic::default();
    let assist = builder(&app, &script).voice(mic.clone()).build();
    assist.start_voice().await.unwrap();
    drop(assist);
    assert_eq!(mic.cancelled.load(Ordering::SeqCst), 1);
}

/// A processor whose id panics.
struct NoName;

impl InputProcessor for NoName {
    fn id(&self) -> &str {
        panic!("no name")
    }

    fn process(
        &self,
        input: AssistInput,
        _: InputContext,
    ) -> BoxFuture<Result<Option<AssistInput>, BoxError>> {
        Box::pin(async move { Ok(Some(input)) })
    }
}

#[tokio::test(start_paused = true)]
async fn a_dropped_submission_and_a_panicking_id_leave_the_controller_ready() {
    let app = notes_app();
    let script = Script::default();
    let assist = builder(&app, &script).processor(NoName).build();
    let failure = failure_of(&assist, AssistInput::Text("hi".into())).await;
    assert_eq!(
        failure.message,
        "The Assist input pipeline could not complete."
    );

    let assist = builder(&app, &script)
        .processor(processor("slow", |_: AssistInput, _: InputContext| async {
            std::future::pending::<Result<Option<AssistInput>, BoxError>>().await
        }))
        .build();
    tokio::select! {
        _ = assist.send("hi") => panic!("the processor hangs"),
        () = tokio::time::sleep(Duration::from_millis(5)) => {}
    }
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert!(!assist.is_busy());
    assert!(assist.transcript().is_empty());
}

/// A voice adapter whose start cancels the controller just as it succeeds.
struct CancelsAsItStarts {
    assist: Arc<std::sync::OnceLock<Assist>>,
    cancelled: Arc<AtomicUsize>,
}

impl VoiceAdapter for CancelsAsItStarts {
    fn start(&self, _: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        let assist = self.assist.clone();
        Box::pin(async move {
            assist.get().unwrap().cancel();
            Ok(())
        })
    }

    fn stop(&self, _: CancellationToken) -> BoxFuture<Result<Option<AssistInput>, BoxError>> {
        Box::pin(async { Ok(None) })
    }

    fn cancel(&self) {
        self.cancelled.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancel_as_the_adapter_starts_is_not_lost() {
    let app = notes_app();
    let script = Script::default();
    let shared = Arc::new(std::sync::OnceLock::new());
    let cancelled = Arc::new(AtomicUsize::new(0));
    let assist = builder(&app, &script)
        .voice(CancelsAsItStarts {
            assist: shared.clone(),
            cancelled: cancelled.clone(),
        })
        .build();
    shared.set(assist.clone()).unwrap();
    assert_eq!(assist.start_voice().await, Ok(VoiceStart::Cancelled));
    assert_eq!(
        cancelled.load(Ordering::SeqCst),
        1,
        "the recording is abandoned"
    );
    assert_eq!(assist.input_status(), InputStatus::Idle);
    assert!(!assist.is_busy());
}
