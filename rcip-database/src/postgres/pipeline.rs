//! Statements sent together on one connection (pipelined), and a connection that leaves the
//! pool rather than go back into it inside a transaction.

use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::task::Poll;

use deadpool_postgres::Object;
use tokio_postgres::Row;

/// What a statement of a pipeline answered.
#[derive(Debug)]
pub(super) enum Reply {
    /// A statement whose rows are not read (`BEGIN`, an update, `COMMIT`).
    Done,
    /// At most one row.
    Row(Option<Row>),
    /// Every row.
    Rows(Vec<Row>),
}

/// One statement of a pipeline.
pub(super) type Step<'a, T = Reply, E = tokio_postgres::Error> =
    Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'a>>;

/// Runs `steps` on one connection as one round trip. tokio-postgres sends a request when its
/// future is first polled, so each step is polled in turn before any is awaited: the server
/// receives and runs them in this order, each statement with its own snapshot taken after
/// the one before it ended. A step that fails before it is sent (its parameters did not
/// encode) ends the pipeline there: the steps after it are never sent. Returns the replies
/// in order, or the first failure in order (a statement that fails inside a transaction fails
/// the ones after it, and a `COMMIT` after it rolls the transaction back).
pub(super) async fn in_order<T, E>(steps: Vec<Step<'_, T, E>>) -> Result<Vec<T>, E> {
    #[allow(clippy::type_complexity)] // A step and its outcome once it has one.
    let mut steps: Vec<(Step<'_, T, E>, Option<Result<T, E>>)> =
        steps.into_iter().map(|step| (step, None)).collect();
    let mut sending = true;
    std::future::poll_fn(|cx| {
        let first = std::mem::replace(&mut sending, false);
        let mut pending = false;
        for (step, outcome) in &mut steps {
            if outcome.is_some() {
                continue;
            }
            match step.as_mut().poll(cx) {
                Poll::Ready(Err(error)) if first => return Poll::Ready(Err(error)),
                Poll::Ready(result) => *outcome = Some(result),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    })
    .await?;
    steps
        .into_iter()
        .filter_map(|(_, outcome)| outcome)
        .collect()
}

/// A pooled connection on which this store may have begun a transaction by hand. Dropped
/// inside one (the commit's future cancelled by a request timeout, say), it is taken out of
/// the pool and closed, so the server rolls the transaction back and no later caller
/// inherits it or its locks.
pub(super) struct Checkout {
    object: Option<Object>,
    /// Between this store's `BEGIN` and the end it saw of that transaction.
    pub(super) in_transaction: bool,
}

impl Checkout {
    pub(super) fn new(object: Object) -> Self {
        Self {
            object: Some(object),
            in_transaction: false,
        }
    }
}

impl Deref for Checkout {
    type Target = Object;

    fn deref(&self) -> &Object {
        match &self.object {
            Some(object) => object,
            // Only `drop` takes it.
            None => unreachable!("a checkout is used after it was dropped"),
        }
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if self.in_transaction
            && let Some(object) = self.object.take()
        {
            drop(Object::take(object));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A step that says when it is first polled (sent), then answers `reply` after one
    /// pending poll (a round trip), or at once when `at_once` (refused before it was sent).
    fn step<'a>(
        name: &'static str,
        reply: Result<u32, &'static str>,
        at_once: bool,
        sent: &'a Mutex<Vec<&'static str>>,
    ) -> Step<'a, u32, &'static str> {
        Box::pin(async move {
            sent.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(name);
            if !at_once {
                tokio::task::yield_now().await;
            }
            reply
        })
    }

    fn sent(log: &Mutex<Vec<&'static str>>) -> Vec<&'static str> {
        log.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    #[tokio::test]
    async fn every_step_is_sent_in_order_and_answered_in_order() {
        let log = Mutex::new(Vec::new());
        let replies = in_order(vec![
            step("begin", Ok(1), false, &log),
            step("lock", Ok(2), false, &log),
            step("key", Ok(3), false, &log),
        ])
        .await;
        assert_eq!(replies, Ok(vec![1, 2, 3]));
        assert_eq!(sent(&log), ["begin", "lock", "key"]);
    }

    #[tokio::test]
    async fn a_step_refused_before_it_is_sent_stops_the_ones_after_it() {
        let log = Mutex::new(Vec::new());
        let replies = in_order(vec![
            step("update", Ok(1), false, &log),
            step("append", Err("did not encode"), true, &log),
            step("commit", Ok(3), false, &log),
        ])
        .await;
        assert_eq!(replies, Err("did not encode"));
        assert_eq!(sent(&log), ["update", "append"], "COMMIT must not be sent");
    }

    #[tokio::test]
    async fn the_first_failure_in_order_is_the_answer() {
        let log = Mutex::new(Vec::new());
        let replies = in_order(vec![
            step("insert", Err("duplicate key"), false, &log),
            step("append", Err("transaction aborted"), false, &log),
            step("commit", Ok(0), false, &log),
        ])
        .await;
        assert_eq!(replies, Err("duplicate key"));
        assert_eq!(sent(&log), ["insert", "append", "commit"]);
    }
}
