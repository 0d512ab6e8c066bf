//! The agent task's file work, off the async runtime.
//!
//! Checkpoints before a changing call, the end-of-turn change record, approval diffs, `/undo`,
//! `/diff`, session listing, switching and deletion, and reading `AGENTS.md` all read, hash,
//! diff or write files. Done on the runtime, each would hold up every task that shares its
//! thread (the screen's redraws, MCP servers, the events of a running turn) for as long as the
//! disk takes. So they run on tokio's blocking threads, like the tools' own file work, and the
//! agent task waits for them without blocking.

use crate::tools::panic_guard;

/// File work that did not finish: the runtime shut down under it.
#[derive(Debug, thiserror::Error)]
#[error("the file work stopped before it finished ({0})")]
pub struct Unfinished(String);

/// Runs `work` on a blocking thread and waits for it without blocking the runtime.
///
/// A panic in `work` goes on in the caller, as if the work had run there: in the agent task that
/// is the task's panic, as before; inside a tool call (a sub-agent's work) the work runs in the
/// tool-call scope, so its panic is that call's error and the panic hooks stand down.
pub(crate) async fn off_runtime<T, F>(work: F) -> Result<T, Unfinished>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if panic_guard::in_tool_call() {
        return match panic_guard::spawn_blocking(work).await {
            Ok(value) => Ok(value),
            // Unwound again so the tool call's own guard reports it; no hook runs a second time.
            Err(crate::tools::ToolError::Panicked(message)) => {
                std::panic::resume_unwind(Box::new(message))
            }
            Err(e) => Err(Unfinished(e.to_string())),
        };
    }
    begin_off_runtime(work).await
}

/// Starts `work` on a blocking thread at once; the future waits for it as [`off_runtime`]
/// does (outside a tool call), so work can begin long before anything waits for it.
pub(crate) fn begin_off_runtime<T, F>(
    work: F,
) -> impl std::future::Future<Output = Result<T, Unfinished>> + Send + 'static
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let running = tokio::task::spawn_blocking(work);
    async move {
        match running.await {
            Ok(value) => Ok(value),
            Err(e) => match e.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(e) => Err(Unfinished(e.to_string())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_work_runs_on_another_thread_and_its_panic_goes_on_in_the_caller() {
        let here = std::thread::current().id();
        let there = off_runtime(|| std::thread::current().id()).await.unwrap();
        assert_ne!(
            here, there,
            "a current-thread runtime: this thread is the runtime"
        );
        let caught = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(off_runtime(
            || -> () { panic!("disk on fire") },
        )))
        .await;
        let payload = caught.expect_err("the panic reached the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"disk on fire"));
    }

    #[tokio::test]
    async fn inside_a_tool_call_a_panic_is_that_calls_error() {
        let call = panic_guard::catch(Box::pin(async {
            let _ = off_runtime(|| -> () { panic!("preview broke") }).await;
            Ok(())
        }))
        .await;
        assert!(
            matches!(call, Err(crate::tools::ToolError::Panicked(ref m)) if m == "preview broke"),
            "{call:?}"
        );
        // The panic hooks ask this on the panicking thread: the blocking one.
        let scoped = panic_guard::catch(Box::pin(async {
            off_runtime(panic_guard::in_tool_call)
                .await
                .map_err(|e| crate::tools::ToolError::failed(e.to_string()))
        }))
        .await;
        assert!(matches!(scoped, Ok(true)), "{scoped:?}");
    }
}
