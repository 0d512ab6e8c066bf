//! The slash commands as the completion popup offers them: name, argument, one-line
//! description, and where the argument's values come from. `update/slash.rs` runs them.

/// Where a command's argument values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// No argument, or one without values to offer (a title).
    None,
    /// The presets and the models used recently.
    Models,
    /// A few step limits.
    Steps,
    /// The code blocks of the last answer, by number.
    CodeBlocks,
    /// The approval modes.
    Approval,
}

/// One slash command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its name, without the `/`.
    pub name: &'static str,
    /// Its argument as the help writes it (`[NAME]`), or empty.
    pub argument: &'static str,
    /// What it does, in one line.
    pub about: &'static str,
    /// Where its argument's values come from.
    pub values: Values,
}

impl Command {
    /// Whether it takes an argument (completing it leaves a space for one).
    pub fn takes_argument(&self) -> bool {
        !self.argument.is_empty()
    }

    /// Whether it does nothing useful without its argument (Enter completes it instead of
    /// running it).
    pub fn needs_argument(&self) -> bool {
        self.takes_argument() && !self.argument.starts_with('[')
    }
}

const fn command(
    name: &'static str,
    argument: &'static str,
    about: &'static str,
    values: Values,
) -> Command {
    Command {
        name,
        argument,
        about,
        values,
    }
}

/// Every command, in the order the popup lists them before anything is typed.
#[rustfmt::skip] // A table: one command a line.
pub const COMMANDS: [Command; 18] = [
    command("model", "[NAME]", "choose the model (a picker without one)", Values::Models),
    command("approval", "[MODE]", "show or set the approval mode", Values::Approval),
    command("undo", "", "put back the files the last turn changed", Values::None),
    command("diff", "", "show what this session's turns changed", Values::None),
    command("new", "", "archive this session and start a new one", Values::None),
    command("resume", "[TITLE]", "reopen an earlier session (a picker without one)", Values::None),
    command("rename", "TITLE", "name this session", Values::None),
    command("steps", "[N]", "show or set the step limit of a turn", Values::Steps),
    command("copy", "[N]", "copy the last answer, or its N-th code block", Values::CodeBlocks),
    command("plan", "TASK", "plan the task (read-only), edit the plan, Enter runs it", Values::None),
    command("init", "", "the model writes a starter AGENTS.md", Values::None),
    command("instructions", "[diff]", "show how AGENTS.md changed since the session last read it", Values::None),
    command("clear", "", "clear the conversation (asks first)", Values::None),
    command("tools", "", "list the tools the model may call", Values::None),
    command("mcp", "[restart NAME]", "list the MCP servers, or restart one", Values::None),
    command("key", "", "enter the API key (masked, checked, saved)", Values::None),
    command("help", "", "the keys and commands", Values::None),
    command("quit", "", "quit MiniClaw", Values::None),
];

/// The command named `name` (no `/`).
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// The step limits `/steps` offers besides the current one.
pub const STEP_CHOICES: [usize; 5] = [4, 6, 10, 20, 50];
