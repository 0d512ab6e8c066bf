//! Where a call that may change any file of the workspace (`run_command`) keeps what it
//! changed, so `/undo` can put it back: the agent's checkpoints implement it (the tools need
//! not know sessions or history).

/// The store of earlier contents and the turn's record of changed files.
pub trait ChangeKeeper: Send + Sync + std::fmt::Debug {
    /// Names the store: content hashes remembered between calls are good only for the store
    /// that kept them (another session keeps its own).
    fn store_id(&self) -> String;
    /// Keeps `bytes` (once per content) and returns their hash.
    fn keep(&self, bytes: &[u8]) -> Result<String, String>;
    /// The content kept under `hash`, if it is there and whole.
    fn kept(&self, hash: &str) -> Option<Vec<u8>>;
    /// The call changed the file `path` (as shown), which before it held the content kept
    /// under `before` (`None`: it did not exist). The first change of a file in a turn is the
    /// one `/undo` goes back to.
    fn changed(&self, path: &str, before: Option<String>);
    /// The call changed files in `folder`, which are not kept (the project's `.gitignore`
    /// leaves it out, or its files are too large): `/undo` says it cannot put them back.
    fn not_kept(&self, folder: &str);
}
