//! Building an agent (its approvals, servers, budgets, history store) and reading what it holds.

use std::sync::Arc;

use super::approvals::{Approvals, Asker};
use super::budget::RequestBudget;
use super::context::ContextBudget;
use super::history::HistoryStore;
use super::session::Session;
use super::turn::{Agent, AgentSettings};
use crate::approval::ApprovalMode;
use crate::command_rules::CommandRules;
use crate::llm::{LlmClient, Preset};
use crate::tools::ToolRegistry;
use crate::tools::mcp::McpHub;

impl Agent {
    /// Lets calls through in `mode`, asking through `asker` in the `ask` mode (none: such
    /// calls are denied, as in headless mode).
    pub fn with_approvals(mut self, mode: ApprovalMode, asker: Option<Arc<dyn Asker>>) -> Self {
        let timeouts = self.approvals.command_timeouts();
        self.approvals = Approvals::new(mode, asker).with_command_rules(self.command_rules());
        self.approvals.set_command_timeouts(timeouts);
        if let Some(hooks) = &self.hooks {
            self.approvals.set_hooks(hooks.clone());
        }
        self
    }

    /// Lets `run_command` calls through by `rules` (the workspace's, shared with the UI).
    pub fn with_command_rules(mut self, rules: Arc<CommandRules>) -> Self {
        self.approvals.set_command_rules(rules);
        self
    }

    /// Says `timeouts` (`run_command`'s configured limits) in its approval dialog.
    pub fn with_command_timeouts(
        mut self,
        timeouts: crate::command_rules::CommandTimeouts,
    ) -> Self {
        self.approvals.set_command_timeouts(timeouts);
        self
    }

    /// The command rules in force (what `/permissions` lists and removes).
    pub fn command_rules(&self) -> Arc<CommandRules> {
        self.approvals.command_rules()
    }

    /// Asks `asker` about calls in the `ask` mode (the UI's answers), keeping the mode and the
    /// command rules.
    pub fn set_asker(&mut self, asker: Arc<dyn Asker>) {
        self.approvals.set_asker(asker);
    }

    /// The sender of the approval mode, for a handle that changes it.
    pub fn approval_sender(&self) -> tokio::sync::watch::Sender<ApprovalMode> {
        self.approvals.mode_sender()
    }

    /// Prices responses by `prices` (DeepSeek's table with the person's `[cost]` settings).
    pub fn with_prices(mut self, prices: crate::llm::prices::Prices) -> Self {
        self.prices = Arc::new(prices);
        self
    }

    /// Keeps the MCP servers (whose tools the registry already offers) with the agent, so the
    /// UI and headless mode can hear them and restart them.
    pub fn with_mcp(mut self, hub: Arc<McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// Keeps `run_command`'s tools (which the registry already offers) with the agent: their
    /// background jobs end with the session, and `/jobs` lists them.
    pub fn with_commands(mut self, commands: crate::tools::command::CommandTools) -> Self {
        self.commands = Some(commands);
        self
    }

    /// The background jobs of `run_command`, when it is offered.
    pub fn jobs(&self) -> Option<&crate::tools::command::Jobs> {
        self.commands.as_ref().map(|c| c.jobs())
    }

    /// Ends the session's background jobs (it is cleared, archived or left).
    pub(super) fn end_jobs(&self) {
        if let Some(jobs) = self.jobs() {
            jobs.stop_all();
        }
    }

    /// The MCP servers, when any are configured.
    pub fn mcp(&self) -> Option<&Arc<McpHub>> {
        self.mcp.as_ref()
    }

    /// Draws every model request from `budget` (a sub-agent's, shared with the turn that started
    /// it) instead of giving each turn a budget of its own.
    pub fn with_request_budget(mut self, budget: RequestBudget) -> Self {
        self.request_budget = Some(budget);
        self
    }

    /// Saves the history through `store` (what loading it returned), so the first save
    /// appends to the files as they were found instead of writing them whole.
    pub fn with_history(mut self, store: HistoryStore) -> Self {
        self.history_store = Some(store);
        self
    }

    /// Saves the session in `slot` (held locked for as long as the agent keeps it).
    pub fn with_slot(mut self, slot: super::history::Slot) -> Self {
        self.slot = Some(slot);
        self
    }

    /// Whether the open session is the workspace's active one (`history.json`), not one saved
    /// in the archive because another MiniClaw has that one open.
    pub fn is_active_session(&self) -> bool {
        self.slot.as_ref().is_none_or(|s| s.is_active())
    }

    /// Keeps requests within `tokens` prompt tokens whatever the model (`None`: each model's
    /// own window).
    pub fn with_context_budget(mut self, tokens: Option<usize>) -> Self {
        self.budget = ContextBudget::configured(tokens);
        self
    }

    /// Compacts the session by itself before a request would pass `percent` of the context
    /// budget (0: only `/compact` does).
    pub fn with_compaction_at(mut self, percent: u8) -> Self {
        self.compact_at = percent.min(100);
        self
    }

    /// The conversation so far.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The current settings.
    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// The model client (clones share its key holder and connection pool).
    pub fn client(&self) -> &LlmClient {
        &self.client
    }

    /// The tools the model is offered.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Uses `preset` from the next request on.
    pub fn set_preset(&self, preset: Preset) {
        self.preset.send_replace(preset);
    }

    /// The sender of the preset, for a handle that changes it while a turn runs.
    pub fn preset_sender(&self) -> tokio::sync::watch::Sender<Preset> {
        self.preset.clone()
    }

    /// The preset of the next request.
    pub fn current_preset(&self) -> Preset {
        match &self.turn_spec.preset {
            Some(preset) => preset.clone(),
            None => self.preset.borrow().clone(),
        }
    }
}
