//! The model key while the program runs: checking a key with one request to the configured
//! server, and the key holder following the key file (`<config dir>/miniclaw/.env`) without a
//! restart, against the scripted local model server.

use crate::support;

use std::path::Path;
use std::time::Duration;

use miniclaw::llm::{ApiKey, ChatMessage, KeyCheck, LlmClient, Preset, Role};
use miniclaw::secrets::Secret;
use support::{MockServer, Reply, SseBuilder};
use tokio_util::sync::CancellationToken;

fn user(text: &str) -> ChatMessage {
    ChatMessage {
        role: Role::User,
        content: Some(text.into()),
        reasoning_content: None,
        tool_calls: None,
        tool_call_id: None,
    }
}

/// Sends one chat; returns the `Authorization` header the server saw for it.
async fn sent_with(client: &LlmClient, server: &MockServer) -> Option<String> {
    server.push(SseBuilder::answer("ok"));
    let before = server.requests().len();
    let cancel = CancellationToken::new();
    let messages = [user("hi")];
    let mut on_event = |_| {};
    let chat = client.chat(&Preset::Flash, &messages, &[], &cancel, &mut on_event);
    tokio::time::timeout(Duration::from_secs(20), chat)
        .await
        .expect("the client hung")
        .expect("the chat succeeds");
    let requests = server.requests();
    assert_eq!(requests.len(), before + 1);
    requests[before].header("authorization").map(str::to_string)
}

/// Writes a key file the way an editor would: a new version with its own time.
fn write(path: &Path, text: &str) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_check_is_one_get_of_models_with_the_key_as_bearer() {
    let server = MockServer::start(vec![]).await;
    server.refuse_key("sk-refused");
    let client = LlmClient::new(&server.url(), None).unwrap();
    assert_eq!(
        client.check_key(&Secret::new("sk-good")).await,
        KeyCheck::Accepted
    );
    assert_eq!(
        client.check_key(&Secret::new("sk-refused")).await,
        KeyCheck::Refused { status: 401 }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/models");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-good"));
    assert!(!client.has_key(), "a check sets no key");
}

#[tokio::test]
async fn a_check_without_a_verdict_says_why_without_the_key() {
    // A server without `/models` (here under a path prefix the script answers with 404).
    let server = MockServer::start(vec![Reply::error(404, "no such route")]).await;
    let client = LlmClient::new(&format!("{}/v9", server.url()), None).unwrap();
    let KeyCheck::Unchecked { reason } = client.check_key(&Secret::new("sk-x-1")).await else {
        panic!("a 404 is no verdict");
    };
    assert!(reason.contains("404"), "{reason}");
    // Nothing listens: a network error, said without the key.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let client = LlmClient::new(&url, None).unwrap();
    let KeyCheck::Unchecked { reason } = client.check_key(&Secret::new("sk-x-2")).await else {
        panic!("a refused connection is no verdict");
    };
    assert!(reason.contains("could not connect"), "{reason}");
    assert!(!reason.contains("sk-x-2"), "{reason}");
}

#[tokio::test]
async fn a_key_written_to_the_key_file_is_used_from_the_next_send() {
    let server = MockServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".env");
    let key = ApiKey::following(None, None, file.clone());
    let client = LlmClient::new(&server.url(), None)
        .unwrap()
        .with_key(key.clone());
    assert!(!client.has_key());
    assert!(!key.refresh().unwrap(), "no file, no key");

    write(&file, "OTHER=1\nDEEPSEEK_API_KEY=sk-first\n");
    assert!(key.refresh_off_thread().await.unwrap());
    assert_eq!(
        sent_with(&client, &server).await.as_deref(),
        Some("Bearer sk-first")
    );
    assert!(!key.refresh().unwrap(), "unchanged: not read again");

    write(&file, "DEEPSEEK_API_KEY=sk-second\n");
    assert!(key.refresh().unwrap());
    assert_eq!(
        sent_with(&client, &server).await.as_deref(),
        Some("Bearer sk-second")
    );
    // A clone of the client (a sub-agent's, the UI's) shares the holder.
    assert_eq!(
        sent_with(&client.clone(), &server).await.as_deref(),
        Some("Bearer sk-second")
    );
    // Taken out of the file: no key.
    write(&file, "OTHER=1\n");
    assert!(key.refresh().unwrap());
    assert!(!client.has_key());
    // The key never entered the process environment.
    assert!(std::env::var_os("DEEPSEEK_API_KEY").is_none());
}

#[test]
fn a_key_from_the_environment_wins_over_the_key_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".env");
    write(&file, "DEEPSEEK_API_KEY=sk-file\n");
    let key = ApiKey::following(Some("sk-env".into()), None, file.clone());
    write(&file, "DEEPSEEK_API_KEY=sk-file-2\n");
    assert!(!key.refresh().unwrap());
    assert_eq!(key.get().unwrap().expose(), "sk-env");
    // The key configured at start was the file's: the file is followed.
    write(&file, "DEEPSEEK_API_KEY=sk-file\n");
    let key = ApiKey::following(Some("sk-file".into()), None, file.clone());
    write(&file, "DEEPSEEK_API_KEY=sk-file-3\n");
    assert!(key.refresh().unwrap());
    assert_eq!(key.get().unwrap().expose(), "sk-file-3");
}

#[test]
fn a_key_typed_for_this_run_gives_way_only_to_a_key_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".env");
    let key = ApiKey::following(None, None, file.clone());
    key.set(Secret::new("sk-typed"), false);
    write(&file, "OTHER=1\n");
    assert!(!key.refresh().unwrap());
    assert_eq!(key.get().unwrap().expose(), "sk-typed");
    write(&file, "DEEPSEEK_API_KEY=sk-file\n");
    assert!(key.refresh().unwrap());
    assert_eq!(key.get().unwrap().expose(), "sk-file");
}

#[test]
fn a_key_file_that_cannot_be_read_is_reported_once_per_version() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".env");
    let key = ApiKey::following(None, None, file.clone());
    std::fs::create_dir(&file).unwrap();
    let err = key.refresh().unwrap_err();
    assert!(err.to_string().contains(".env"), "{err}");
    assert!(!key.refresh().unwrap(), "said once");
}

#[test]
fn debug_output_never_shows_the_key() {
    let key = ApiKey::fixed(Some("sk-debug-SECRET".into()));
    let client = LlmClient::new("http://127.0.0.1:9", None)
        .unwrap()
        .with_key(key.clone());
    let text = format!("{key:?} {client:?} {:?}", key.get());
    assert!(!text.contains("sk-debug-SECRET"), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
}
