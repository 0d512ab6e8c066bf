//! A panic inside a tool call is that call's error, not the end of the session.
//!
//! The registry polls each tool future inside a "tool call" scope and catches its unwinding; tools'
//! blocking work runs inside the same scope on its worker thread, and tokio hands its panic back.
//! The process's panic hooks (the terminal restore, the crash report) ask [`in_tool_call`] and
//! stand down for such panics. The scope is a thread-local counter: it is set exactly while this
//! thread runs tool code, and a panic hook runs on the panicking thread before unwinding.
//!
//! Allocation failure is not a panic: Rust aborts the process and nothing can catch it. Tools
//! avoid it with caps instead (body size, parse limits in `html_parse`, output caps).

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::FutureExt;

use super::error::ToolError;

thread_local! {
    /// How many tool calls this thread is running code of right now (nested for sub-agents).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Whether this thread is running code of a tool call, so that a panic here will be caught and
/// reported as the call's error. Panic hooks read it.
pub fn in_tool_call() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Marks this thread as running tool code until dropped (also when dropped by unwinding).
struct Scope;

impl Scope {
    fn enter() -> Self {
        DEPTH.with(|d| d.set(d.get() + 1));
        Self
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// A future polled inside the tool-call scope.
struct Scoped<F>(F);

impl<F: Future + Unpin> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _scope = Scope::enter();
        Pin::new(&mut self.0).poll(cx)
    }
}

/// Runs a tool's future; a panic while polling it becomes [`ToolError::Panicked`].
pub async fn catch<T, F>(future: F) -> Result<T, ToolError>
where
    F: Future<Output = Result<T, ToolError>> + Unpin,
{
    // AssertUnwindSafe: after a panic the future is dropped, never polled again, and the tool's
    // shared state is only what a failed call may leave anyway.
    match AssertUnwindSafe(Scoped(future)).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => Err(panicked(payload.as_ref())),
    }
}

/// Runs `work` on a blocking thread inside the tool-call scope; a panic in it becomes
/// [`ToolError::Panicked`].
pub async fn spawn_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let joined = tokio::task::spawn_blocking(move || {
        let _scope = Scope::enter();
        work()
    })
    .await;
    joined.map_err(|e| match e.try_into_panic() {
        Ok(payload) => panicked(payload.as_ref()),
        Err(e) => ToolError::failed(format!("the tool's worker failed: {e}")),
    })
}

/// The error for a panic with this payload.
fn panicked(payload: &(dyn Any + Send)) -> ToolError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    tracing::error!(%message, "a tool call panicked; reported as its error");
    ToolError::Panicked(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_future_is_an_error_and_the_scope_ends() {
        let r: Result<(), _> = catch(Box::pin(async { panic!("boom") })).await;
        assert!(
            matches!(r, Err(ToolError::Panicked(ref m)) if m == "boom"),
            "{r:?}"
        );
        assert!(!in_tool_call());
    }

    #[tokio::test]
    async fn the_scope_is_set_while_polling_only() {
        let r = catch(Box::pin(async { Ok(in_tool_call()) })).await;
        assert!(matches!(r, Ok(true)));
        assert!(!in_tool_call());
    }

    #[tokio::test]
    async fn a_panicking_blocking_closure_is_an_error() {
        let r: Result<(), _> = spawn_blocking(|| panic!("{} down", 2)).await;
        assert!(
            matches!(r, Err(ToolError::Panicked(ref m)) if m == "2 down"),
            "{r:?}"
        );
        assert!(matches!(spawn_blocking(in_tool_call).await, Ok(true)));
    }
}
