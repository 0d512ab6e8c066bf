//! `miniclaw-tui`: flags and configuration, then the full-screen UI or headless mode.

use std::process::ExitCode;

use miniclaw::agent::TurnOutcome;
use miniclaw::config::{self, Config};
use miniclaw::{headless, startup};

fn main() -> ExitCode {
    // .env files are read before any thread starts: they set process environment.
    config::load_dotenv();
    let config = Config::from_env_and_args();
    if let Some(path) = miniclaw::logging::init() {
        tracing::info!(version = env!("CARGO_PKG_VERSION"), log = %path.display(), "miniclaw-tui starting");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("miniclaw-tui: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(config))
}

async fn run(config: Config) -> ExitCode {
    if config.cli.list_tools {
        let (tools, warnings) = startup::registry(&config);
        for w in warnings {
            eprintln!("warning: {w}");
        }
        for tool in tools.iter() {
            let schema = tool.schema();
            let source = match tool.source() {
                miniclaw::tools::ToolSource::BuiltIn => "built-in".to_string(),
                miniclaw::tools::ToolSource::Plugin(path) => format!("plugin {path}"),
            };
            let line = schema.description.lines().next().unwrap_or_default();
            println!("{:<26} {:<10} {line}", schema.name, source);
        }
        return ExitCode::SUCCESS;
    }
    if let Some(prompt) = config.cli.print.clone() {
        if config.api_key().is_none() {
            eprintln!("miniclaw-tui: {}", config::missing_key_message());
            return ExitCode::from(2);
        }
        let started = match startup::start(&config) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("miniclaw-tui: {e}");
                return ExitCode::from(2);
            }
        };
        for notice in &started.notices {
            eprintln!("[notice] {notice}");
        }
        let outcome = headless::run(started.agent, &prompt).await;
        drop(started.lock);
        return match outcome {
            TurnOutcome::Answered => ExitCode::SUCCESS,
            TurnOutcome::StepLimit => {
                eprintln!("miniclaw-tui: stopped at the step limit without a final answer");
                ExitCode::from(3)
            }
            TurnOutcome::Interrupted => {
                eprintln!("miniclaw-tui: interrupted");
                ExitCode::from(130)
            }
            TurnOutcome::Failed => {
                eprintln!("miniclaw-tui: the turn failed (see the error above)");
                ExitCode::FAILURE
            }
        };
    }
    eprintln!("miniclaw-tui: the full-screen UI is not wired yet; use --print");
    ExitCode::FAILURE
}
