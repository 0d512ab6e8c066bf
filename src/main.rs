//! `miniclaw-tui`: flags and configuration, then the full-screen UI or headless mode.

use std::io::Write;
use std::process::ExitCode;

/// Writes a line to stderr, ignoring failure: the terminal may be gone (a closed window), and a
/// failed write must not turn a clean exit into a crash. The line is cleaned of escape sequences
/// and control characters: it may carry text from outside (a server's error, a plugin's warning).
macro_rules! say {
    ($($arg:tt)*) => {{
        let line = miniclaw::terminal_text::clean(&format!($($arg)*));
        let _ = writeln!(std::io::stderr(), "{line}");
    }};
}

use miniclaw::agent::TurnOutcome;
use miniclaw::config::{self, Config, OutputFormat};
use miniclaw::headless::{self, PromptSource, Report};
use miniclaw::startup;
use miniclaw::tools::toolbox::describe_tools;
use miniclaw::tui::{self, Theme, TuiOptions};

/// What this run does, decided from the flags and whether stdin is a terminal.
enum Mode {
    /// `--list-tools`.
    ListTools,
    /// The full-screen UI.
    Tui,
    /// One turn without the screen.
    Headless {
        /// Where the prompt comes from.
        source: PromptSource,
        /// What goes on stdout.
        format: OutputFormat,
    },
}

impl Mode {
    /// The mode the flags ask for; `--output-format` outside headless mode is a usage error.
    fn decide(config: &Config) -> Result<Self, ExitCode> {
        use std::io::IsTerminal;
        let source = headless::prompt_source(
            config.cli.print.as_deref(),
            config.cli.list_tools,
            std::io::stdin().is_terminal(),
        );
        match (source, config.cli.output_format) {
            (Some(source), format) => Ok(Mode::Headless {
                source,
                format: format.unwrap_or_default(),
            }),
            (None, Some(_)) => {
                say!(
                    "miniclaw-tui: --output-format is for headless mode only: pass -p PROMPT, or -p - (or pipe the prompt in) to read it from stdin"
                );
                Err(ExitCode::from(2))
            }
            (None, None) if config.cli.plan => {
                say!(
                    "miniclaw-tui: --plan is for headless mode (-p TASK --plan); in the full-screen UI type /plan TASK"
                );
                Err(ExitCode::from(2))
            }
            (None, None) if config.cli.list_tools => Ok(Mode::ListTools),
            (None, None) => Ok(Mode::Tui),
        }
    }
}

/// Ends a run that could not start: the reason on stderr and, in the JSON formats, a report
/// on stdout, so a script always finds one there. Exit status 2.
fn refuse(format: OutputFormat, message: &str) -> ExitCode {
    say!("miniclaw-tui: {message}");
    headless::write_report(format, &Report::not_started(message));
    ExitCode::from(2)
}

fn main() -> ExitCode {
    // One malloc arena for every thread, set before any other thread starts: the threads
    // besides the runtime's (file work, the history's writer, the terminal's reader) allocate
    // little, and an arena of their own each kept its freed pages resident.
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; it takes no pointers.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    // A jailed command's supervisor is this binary started again: it does only that.
    if let Some(code) = miniclaw::jail::run_if_asked() {
        return code;
    }
    // MiniClaw's own folders are fixed from the real environment before any file is read,
    // then the .env files are read, before any thread starts (the person's sets process
    // environment; the project's is read into settings only).
    miniclaw::paths::fix();
    config::load_env_files();
    // Keys leave the environment before any thread or child exists (see `secrets`), the
    // variables providers name for theirs too.
    let files = miniclaw::settings::SettingsFiles::default_locations();
    miniclaw::secrets::take_from_environment(&miniclaw::settings::key_variables(&files));
    let mut config = Config::from_env_and_args();
    let mode = match Mode::decide(&config) {
        Ok(mode) => mode,
        Err(code) => return code,
    };
    // The log (in MiniClaw's data folder) from here on: the folder question logs too.
    if let Some(path) = miniclaw::logging::init() {
        tracing::info!(version = env!("CARGO_PKG_VERSION"), log = %path.display(), "miniclaw-tui starting");
    }
    if let Mode::Tui = mode
        && let Err(code) = ask_about_the_folder(&mut config)
    {
        return code;
    }
    match decide_trust(&config, &mode) {
        Ok(trusted) => config.project_trusted = trusted,
        Err(code) => return code,
    }
    // The project's providers count once the folder is trusted.
    if let Err(e) = config.choose_model() {
        return match mode {
            Mode::Headless { format, .. } => refuse(format, &e.to_string()),
            Mode::Tui | Mode::ListTools => {
                say!("miniclaw-tui: {e}");
                ExitCode::from(2)
            }
        };
    }
    install_panic_report();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            say!("miniclaw-tui: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(config, mode));
    // Every way out (a signal included: the UI and headless mode turn them into a return) ends
    // the MCP servers' process groups.
    miniclaw::tools::mcp::end_all();
    // Work still running on a blocking thread (a stuck read) must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// The theme the UI uses: the one given now (remembered), else the one given last time.
fn theme_name(config: &Config) -> Option<String> {
    let choices = miniclaw::remembered::path();
    match (&config.cli.theme, &choices) {
        (Some(name), Some(path)) => {
            let _ = miniclaw::remembered::remember(path, |c| c.theme = Some(name.clone()));
            Some(name.clone())
        }
        (Some(name), None) => Some(name.clone()),
        (None, Some(path)) => miniclaw::remembered::load(path).theme,
        (None, None) => None,
    }
}

/// The first start of the UI in a folder nobody named asks, in a dialog on the screen, whether
/// to work there; a yes is remembered for the folder. A no ends the run (status 0) saying how
/// to pick a folder. Asked before anything of the folder is loaded or started.
fn ask_about_the_folder(config: &mut Config) -> Result<(), ExitCode> {
    use miniclaw::remembered::folders;
    use miniclaw::tui::folder_question::{FolderAnswer, FolderQuestion, ask};
    use std::io::IsTerminal;
    if config.workspace_origin != config::WorkspaceOrigin::StartFolder
        || config.folder_record.accepted
        // No keyboard: the UI cannot start either, and says so itself.
        || !std::io::stdin().is_terminal()
    {
        return Ok(());
    }
    // Keys but no screen (`miniclaw-tui > file`): the question cannot be shown, so the folder
    // is not worked in unasked.
    if !std::io::stdout().is_terminal() {
        say!(
            "miniclaw-tui: not started: this folder was never worked in, and the question whether to cannot be shown (stdout is not a terminal). Start it on a terminal once, or name the folder: miniclaw-tui -C DIR"
        );
        return Err(ExitCode::from(2));
    }
    let folder = folders::canonical(&config.workspace);
    let question = FolderQuestion {
        folder: folder.clone(),
        history: config.state_dir().to_path_buf(),
        approval: config.approval,
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let (theme, _) = Theme::load(theme_name(config).as_deref(), no_color);
    match ask(&question, &theme) {
        // A conversation found in a folder never worked in before came with the folder (a
        // cloned repository's), not from you: it is not continued unasked. A new session
        // starts; `/resume` still lists it.
        Ok(FolderAnswer::Yes)
            if config.state_dir() == config.workspace.as_path()
                && config.history_path().exists()
                && config.cli.resume.is_none() =>
        {
            config.cli.new = true;
            config.warnings.push(
                "This folder came with a conversation of its own (history.json): it was not continued, a new session started (/resume lists it).".into(),
            );
        }
        Ok(FolderAnswer::Yes) => {}
        Ok(FolderAnswer::No) => {
            say!(
                "miniclaw-tui: not started in {}. Start it in the folder you want to work in, or name one: miniclaw-tui -C DIR",
                folder.display()
            );
            return Err(ExitCode::SUCCESS);
        }
        Err(e) => {
            say!("miniclaw-tui: terminal error: {e}");
            return Err(ExitCode::FAILURE);
        }
    }
    let Some(store) = folders::path() else {
        return Ok(());
    };
    match folders::remember(&store, &folder, |r| r.accepted = true) {
        Ok(None) => {}
        Ok(Some(aside)) => config.warnings.push(format!(
            "MiniClaw's folder records could not be read; the damaged file was kept as {} and a new one started.",
            aside.display()
        )),
        Err(e) => config.warnings.push(format!(
            "The yes to working in this folder could not be remembered ({e}); it holds for this run."
        )),
    }
    Ok(())
}

/// Whether this folder's own commands (plugin tools) may run: trusted before with the same
/// content, `--trust`, or a yes to the question on the terminal. Headless runs cannot ask, so
/// they refuse to start unless trust was given.
fn decide_trust(config: &Config, mode: &Mode) -> Result<bool, ExitCode> {
    use miniclaw::trust;
    use std::io::IsTerminal;
    let Some(project) = std::env::current_dir()
        .ok()
        .and_then(|d| trust::ProjectCommands::scan(&d))
    else {
        return Ok(false);
    };
    let store = trust::trust_path();
    let changes = trust::changes::changes_path();
    let remember = |project: &trust::ProjectCommands| {
        if let Some(store) = &store
            && let Err(e) = trust::accept(project, store, changes.as_deref())
        {
            say!("miniclaw-tui: the trust could not be remembered ({e}); it holds for this run");
        }
    };
    if config.cli.trust {
        remember(&project);
        return Ok(true);
    }
    // Trusted before, unless MiniClaw's own tools changed a file it could load since then.
    let changed = match store
        .as_deref()
        .map(|s| trust::standing(&project, s, changes.as_deref()))
    {
        Some(trust::Standing::Trusted) => return Ok(true),
        Some(trust::Standing::ChangedSince(files)) => files,
        _ => Vec::new(),
    };
    let question = if changed.is_empty() {
        project.question()
    } else {
        project.question_with_changes(&changed)
    };
    match mode {
        Mode::ListTools => return Ok(false),
        // Its stdin is the prompt, or no terminal: the question cannot be asked.
        Mode::Headless { format, .. } => {
            say!("miniclaw-tui: {question}");
            let why = if changed.is_empty() {
                "this folder is not trusted".to_string()
            } else {
                format!(
                    "MiniClaw's tools changed {} in this trusted folder",
                    changed.join(", ")
                )
            };
            return Err(refuse(
                *format,
                &format!(
                    "{why}, so nothing was run. Pass --trust to trust it (remembered until the files change), or start miniclaw-tui here once and answer the question."
                ),
            ));
        }
        Mode::Tui => {}
    }
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    say!("{question}");
    let _ = write!(std::io::stderr(), "Trust this folder and load them? [y/N] ");
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if yes {
        remember(&project);
    }
    Ok(yes)
}

/// On a panic in any thread or task: log it, print where the log is, and exit non-zero. The UI's
/// own hook (installed later, chained before this one) restores the terminal first.
///
/// A panic inside a tool call is only logged: the tool registry catches it and the call fails
/// with an error observation while the session goes on. Nothing is printed then, as the screen
/// is still in use. (Allocation failure aborts without a panic; tools rely on caps for that.)
fn install_panic_report() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if miniclaw::tools::panic_guard::in_tool_call() {
            tracing::error!(panic = %info, "panic in a tool call; the call fails, the session goes on");
            return;
        }
        tracing::error!(panic = %info, "panic");
        previous(info);
        match miniclaw::paths::log_path() {
            Some(log) => say!("miniclaw-tui crashed; the log is at {}", log.display()),
            None => say!("miniclaw-tui crashed"),
        }
        std::process::exit(101);
    }));
}

/// The prompt of a headless run, read from stdin when that is where it comes from; a prompt
/// that cannot be had ends the run with status 2.
async fn headless_prompt(source: PromptSource, format: OutputFormat) -> Result<String, ExitCode> {
    use std::io::IsTerminal;
    if source == PromptSource::Stdin && std::io::stdin().is_terminal() {
        say!("miniclaw-tui: reading the prompt from stdin; end it with Ctrl+D");
    }
    // A blocking read, off the async runtime.
    let read = tokio::task::spawn_blocking(move || {
        headless::read_prompt(
            source,
            std::io::stdin().lock(),
            headless::MAX_STDIN_PROMPT_BYTES,
        )
    })
    .await;
    match read {
        Ok(Ok(prompt)) => Ok(prompt),
        Ok(Err(e)) => Err(refuse(format, &e.to_string())),
        Err(e) => Err(refuse(format, &format!("could not read the prompt: {e}"))),
    }
}

async fn run(config: Config, mode: Mode) -> ExitCode {
    match mode {
        Mode::ListTools => {
            let (tools, warnings) = startup::list_tools(&config).await;
            for w in warnings {
                say!("warning: {w}");
            }
            let mut out = std::io::stdout().lock();
            for tool in tools {
                let _ = writeln!(out, "{}", tool_line(&tool));
            }
            ExitCode::SUCCESS
        }
        Mode::Headless { source, format } => match headless_prompt(source, format).await {
            Ok(prompt) => run_headless(config, &prompt, format).await,
            Err(code) => code,
        },
        Mode::Tui => run_tui(config).await,
    }
}

/// One `--list-tools` line. Names and descriptions come from plugin files and MCP servers
/// nobody checked: escape sequences and control characters are cleaned out, and each field
/// is kept on its line, whatever the output is.
fn tool_line(tool: &miniclaw::tools::toolbox::ToolInfo) -> String {
    let one_line = |text: &str| miniclaw::terminal_text::clean(text).replace(['\n', '\t'], " ");
    format!(
        "{:<24} {}  [{}]",
        one_line(&tool.name),
        one_line(&tool.summary),
        one_line(&tool.source)
    )
}

async fn run_headless(config: Config, prompt: &str, format: OutputFormat) -> ExitCode {
    // Nothing can be sent without the chosen provider's key: said before anything starts.
    match config.key_problem() {
        Some(miniclaw::llm::LlmError::MissingKey) => {
            return refuse(format, &miniclaw::secrets::missing_key_message());
        }
        Some(problem) => return refuse(format, &problem.to_string()),
        None => {}
    }
    if let Some(why) = too_wide_to_guess(&config) {
        return refuse(format, &why);
    }
    let mut started = match startup::start(&config).await {
        Ok(s) => s,
        Err(e) => return refuse(format, &e.to_string()),
    };
    let choice = startup::SessionChoice::from_flags(&config.cli, true);
    // `--continue` goes on with the newest session this run can open: while another MiniClaw
    // has the folder's active one, the newest of the others (a run beside the UI saved there).
    let choice = match (choice, &started.active_held_by) {
        (startup::SessionChoice::Continue, Some(_)) => startup::SessionChoice::Newest,
        (choice, _) => choice,
    };
    if let Some(holder) = &started.active_held_by {
        started.notices.push(format!(
            "Another MiniClaw{holder} has this folder's active session, so this run works in a session of its own."
        ));
    }
    match startup::open_session(&mut started.agent, &choice).await {
        Ok(said) => started.notices.extend(said),
        Err(e) => return refuse(format, &e.to_string()),
    }
    let start = run_start(&config, &choice, started.agent.session());
    let kind = if config.cli.plan {
        headless::RunKind::Plan
    } else {
        headless::RunKind::Turn
    };
    // `/NAME args` runs the person's command, `/skill NAME` a skill, as in the UI.
    let expanded = if kind == headless::RunKind::Turn {
        let (commands, warnings) = tui::load_custom_commands(config.project_trusted);
        started.notices.extend(warnings);
        let skills = started.agent.sandbox().skills().clone();
        match headless::slash::expand(prompt, &commands, &skills, &config.providers) {
            Ok(Some((input, notice))) => {
                started.notices.extend(notice);
                Some(input)
            }
            Ok(None) => None,
            Err(why) => return refuse(format, &format!("/skill: {why}")),
        }
    } else {
        None
    };
    let (outcome, code) = headless::run(
        started.agent,
        (prompt, kind, expanded),
        format,
        (start, started.notices),
    )
    .await;
    match outcome {
        TurnOutcome::Interrupted => say!("miniclaw-tui: interrupted"),
        TurnOutcome::Failed(_) if config.cli.plan => {
            say!("miniclaw-tui: the plan did not finish (see the plan lines above)")
        }
        TurnOutcome::Failed(_) => say!("miniclaw-tui: the turn failed (see the error above)"),
        // A step limit was said once already (a notice in the trace).
        TurnOutcome::Answered | TurnOutcome::StepLimit => {}
    }
    if code == headless::DENIED_EXIT_CODE {
        say!("miniclaw-tui: some calls were not run: the approval mode does not allow them here");
    }
    ExitCode::from(code)
}

/// Why a headless run may not take the folder it started in as its workspace: `/` or the home
/// folder, where the tools would reach everything, are used only when `-C` names them.
fn too_wide_to_guess(config: &Config) -> Option<String> {
    // Only a folder named with -C may be that wide; one taken from where MiniClaw started (or
    // `./workspace`, whatever it resolves to) may not.
    if config.workspace_origin == config::WorkspaceOrigin::Named {
        return None;
    }
    let canonical = miniclaw::remembered::folders::canonical;
    let folder = canonical(&config.workspace);
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| canonical(std::path::Path::new(&h)));
    let what = if folder.parent().is_none() {
        "the root folder"
    } else if home.as_deref() == Some(folder.as_path()) {
        "your home folder"
    } else {
        return None;
    };
    Some(format!(
        "MiniClaw was started in {what} ({}), which the tools would then read and change in full; nothing was run. Start it in a project folder, or name the workspace: -C DIR (-C {} to work there after all).",
        folder.display(),
        folder.display()
    ))
}

/// How a headless run starts: the session `choice` opened (now `session`) and the approval mode.
fn run_start(
    config: &Config,
    choice: &startup::SessionChoice,
    session: &miniclaw::agent::Session,
) -> headless::RunStart {
    use headless::SessionStart;
    use startup::SessionChoice;
    let started = match choice {
        SessionChoice::Continue if session.has_prompts() => SessionStart::Continued,
        SessionChoice::Continue | SessionChoice::New => SessionStart::New,
        SessionChoice::Resume(_) | SessionChoice::Newest => SessionStart::Resumed,
    };
    headless::RunStart {
        session: started,
        // A planted session's title may hold C1 controls, which JSON leaves as they are.
        session_title: session.title().map(|t| miniclaw::terminal_text::clean(&t)),
        approval: config.approval,
        approval_source: config.approval_source,
    }
}

async fn run_tui(config: Config) -> ExitCode {
    // The history is read once the agent runs (see `Opening`).
    let (mut started, opening) = match startup::begin(&config).await {
        Ok(s) => s,
        Err(e) => {
            say!("miniclaw-tui: {e}");
            return ExitCode::from(2);
        }
    };
    let mut choice = startup::SessionChoice::from_flags(&config.cli, false);
    // Going on with the active session, the UI starts while it is read, showing its last turns
    // (its glimpse) meanwhile; another session is opened from it first, as before.
    let opening = if choice == startup::SessionChoice::Continue && opening.is_loading() {
        let glimpse = miniclaw::agent::history::glimpse(&config.history_path());
        (opening, glimpse)
    } else {
        match started.agent.open(opening).await {
            Ok(said) => started.notices.extend(said),
            Err(e) => {
                say!("miniclaw-tui: {e}");
                return ExitCode::from(2);
            }
        }
        (miniclaw::agent::Opening::Open, None)
    };
    if let Some(holder) = &started.active_held_by {
        // `-c` beside another window: the newest session this one can open, as headless.
        if config.cli.continue_session && choice == startup::SessionChoice::Continue {
            choice = startup::SessionChoice::Newest;
        }
        let here = if choice == startup::SessionChoice::Continue {
            "so this one started a new session (/resume lists the others)"
        } else {
            "so this one works in a session of its own"
        };
        started.notices.push(format!(
            "Another MiniClaw{holder} has this folder's open session, {here}."
        ));
    }
    match startup::open_session(&mut started.agent, &choice).await {
        Ok(said) => started.notices.extend(said),
        Err(e) => {
            say!("miniclaw-tui: {e}");
            return ExitCode::from(2);
        }
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let remembered = miniclaw::remembered::path()
        .map(|p| miniclaw::remembered::load(&p))
        .unwrap_or_default();
    // A theme given now is remembered; without one, the one given last time is used.
    let (theme, warning) = Theme::load(theme_name(&config).as_deref(), no_color);
    let mut notices = started.notices;
    notices.extend(warning);
    let (custom_commands, warnings) = tui::load_custom_commands(config.project_trusted);
    notices.extend(warnings);
    let options = TuiOptions {
        workspace: config.workspace.clone(),
        preset: config.preset.clone(),
        max_steps: usize::from(config.cli.max_steps),
        mouse: !config.cli.no_mouse,
        theme,
        notices,
        tools: describe_tools(started.agent.registry()),
        recent_models: remembered.recent_models,
        resume_picker: config
            .cli
            .resume
            .as_deref()
            .is_some_and(|r| r.trim().is_empty()),
        approval: config.approval,
        approval_source: config.approval_source,
        run_command: started.command_status.clone(),
        skills: started.agent.sandbox().skills().clone(),
        custom_commands: std::sync::Arc::new(custom_commands),
    };
    let result = tui::run(started.agent, opening, options).await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // As when the history could not be read before the UI started.
        Err(e @ tui::TuiError::SessionUnavailable(_)) => {
            say!("miniclaw-tui: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            say!("miniclaw-tui: {e}");
            if let Some(log) = miniclaw::paths::log_path() {
                say!("The log is at {}", log.display());
            }
            ExitCode::FAILURE
        }
    }
}
