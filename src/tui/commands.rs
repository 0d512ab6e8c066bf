//! The slash commands: the one table that the `/` popup offers, the dispatcher
//! (`update/slash.rs`) runs, and the help (F1) and the README list.
//!
//! The compiler keeps the three in step: the dispatcher matches every [`CommandId`] (a new one
//! does not build until it runs), the dispatcher reaches a command only through [`find`] (a
//! name not in the table is unknown), and a `CommandId` without a row in [`COMMANDS`] is never
//! constructed, which the dead-code lint refuses.

use Argument::{None as NoArgument, Optional, Required};
use CommandId as C;

/// Which command a row is: what the dispatcher matches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandId {
    /// `/model`.
    Model,
    /// `/approval`.
    Approval,
    /// `/undo`.
    Undo,
    /// `/diff`.
    Diff,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/rename`.
    Rename,
    /// `/steps`.
    Steps,
    /// `/copy`.
    Copy,
    /// `/plan`.
    Plan,
    /// `/init`.
    Init,
    /// `/compact`.
    Compact,
    /// `/instructions`.
    Instructions,
    /// `/clear`.
    Clear,
    /// `/tools`.
    Tools,
    /// `/mcp`.
    Mcp,
    /// `/jobs`.
    Jobs,
    /// `/hooks`.
    Hooks,
    /// `/skills`.
    Skills,
    /// `/skill`.
    Skill,
    /// `/permissions`.
    Permissions,
    /// `/key`.
    Key,
    /// `/status`.
    Status,
    /// `/find`.
    Find,
    /// `/help`.
    Help,
    /// `/quit`.
    Quit,
}

/// What follows a command's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    /// Nothing.
    None,
    /// Something it may be given, named as the help writes it (`NAME`, `restart NAME`).
    Optional(&'static str),
    /// Something it cannot do without (`TITLE`, `TASK`).
    Required(&'static str),
}

/// Where a command's argument values come from (the popup after `/model `).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// No values to offer (no argument, or a free one like a title).
    None,
    /// The presets and the models used recently.
    Models,
    /// A few step limits.
    Steps,
    /// The code blocks of the last answer, by number.
    CodeBlocks,
    /// The approval modes.
    Approval,
    /// The skills, by name.
    Skills,
}

/// One slash command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Which one it is.
    pub id: CommandId,
    /// Its name, without the `/`.
    pub name: &'static str,
    /// Other names it answers to (not offered by the popup).
    pub aliases: &'static [&'static str],
    /// What follows its name.
    pub argument: Argument,
    /// What it does, in one line.
    pub about: &'static str,
    /// Where its argument's values come from.
    pub values: Values,
    /// Whether it waits for a running turn to end (it stays in the input with a hint).
    pub waits: bool,
}

impl Command {
    /// Its argument as the help writes it (`[NAME]`, `TITLE`), or empty.
    pub fn argument_text(&self) -> String {
        match self.argument {
            Argument::None => String::new(),
            Argument::Optional(what) => format!("[{what}]"),
            Argument::Required(what) => what.to_string(),
        }
    }

    /// How it is written with its argument: `/model [NAME]`.
    pub fn usage(&self) -> String {
        match self.argument {
            Argument::None => format!("/{}", self.name),
            _ => format!("/{} {}", self.name, self.argument_text()),
        }
    }

    /// Whether it takes an argument (completing it leaves a space for one).
    pub fn takes_argument(&self) -> bool {
        self.argument != Argument::None
    }

    /// Whether it does nothing useful without its argument (Enter in the popup completes it
    /// instead of running it).
    pub fn needs_argument(&self) -> bool {
        matches!(self.argument, Argument::Required(_))
    }

    /// The same row whose argument offers `values`.
    const fn offering(self, values: Values) -> Self {
        Self { values, ..self }
    }

    /// The same row, waiting for a running turn to end.
    const fn waiting(self) -> Self {
        Self {
            waits: true,
            ..self
        }
    }

    /// The same row, also answering to `aliases`.
    const fn alias(self, aliases: &'static [&'static str]) -> Self {
        Self { aliases, ..self }
    }
}

/// A row of the table.
const fn command(
    id: CommandId,
    name: &'static str,
    argument: Argument,
    about: &'static str,
) -> Command {
    Command {
        id,
        name,
        aliases: &[],
        argument,
        about,
        values: Values::None,
        waits: false,
    }
}

/// Every command, in the order the popup and the help list them.
#[rustfmt::skip] // A table: one command a line.
pub const COMMANDS: &[Command] = &[
    command(C::Model, "model", Optional("NAME"), "choose the model (a picker without one)").offering(Values::Models),
    command(C::Approval, "approval", Optional("MODE"), "show or set the approval mode").offering(Values::Approval),
    command(C::Undo, "undo", NoArgument, "put back the files the last turn changed").waiting(),
    command(C::Diff, "diff", NoArgument, "show what this session's turns changed"),
    command(C::New, "new", NoArgument, "archive this session and start a new one").waiting(),
    command(C::Resume, "resume", Optional("TITLE"), "reopen an earlier session (a picker without one)").waiting(),
    command(C::Rename, "rename", Required("TITLE"), "name this session"),
    command(C::Steps, "steps", Optional("N"), "show or set the step limit of a turn").offering(Values::Steps),
    command(C::Copy, "copy", Optional("N"), "copy the last answer, or its N-th code block").offering(Values::CodeBlocks),
    command(C::Plan, "plan", Required("TASK"), "plan the task (read-only), edit the plan, Enter runs it").waiting(),
    command(C::Init, "init", NoArgument, "the model writes a starter AGENTS.md").waiting(),
    command(C::Compact, "compact", Optional("WHAT TO KEEP"), "summarize the session so far, freeing the context").waiting(),
    command(C::Instructions, "instructions", Optional("diff"), "show how AGENTS.md changed since the session last read it"),
    command(C::Clear, "clear", NoArgument, "clear the conversation (asks first)").waiting(),
    command(C::Tools, "tools", NoArgument, "list the tools the model may call"),
    command(C::Mcp, "mcp", Optional("restart NAME"), "list the MCP servers, or restart one"),
    command(C::Skills, "skills", NoArgument, "list the skills the model may use (name, where from, description)"),
    command(C::Skill, "skill", Required("NAME [TEXT]"), "start a turn that uses the skill NAME (with TEXT)").offering(Values::Skills).waiting(),
    command(C::Jobs, "jobs", Optional("stop N"), "list run_command's background jobs, or end one"),
    command(C::Hooks, "hooks", NoArgument, "list your hooks, where each comes from and its last result"),
    command(C::Permissions, "permissions", Optional("remove N"), "list the rules that let commands run without asking, or remove one"),
    command(C::Key, "key", NoArgument, "enter the API key (masked, checked, saved)"),
    command(C::Find, "find", Required("TEXT"), "find TEXT in the conversation (Ctrl+F)"),
    command(C::Status, "status", NoArgument, "model, approval mode, workspace, session, tokens, context, skills, MCP servers"),
    command(C::Help, "help", NoArgument, "the keys and commands"),
    command(C::Quit, "quit", NoArgument, "quit MiniClaw").alias(&["exit"]),
];

/// The command named `name` (no `/`), by its name or an alias.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// The step limits `/steps` offers besides the current one.
pub const STEP_CHOICES: [usize; 5] = [4, 6, 10, 20, 50];
