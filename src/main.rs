//! The `rawpv` binary: parse the command line, dispatch, exit with the command's code.

use clap::Parser;
use rawpv::cli::{Cli, Command};
use rawpv::source::SourceKind;
use rawpv::{app, cmd};

/// mimalloc instead of glibc's malloc: frames are allocated on the reader thread and freed on
/// the folding one, which glibc serialises on arena locks (issue 8: a third of `check`'s time
/// on a 1 GB file was spent in the kernel waking lock waiters).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    rawpv::no_transparent_huge_pages();
    let cli = Cli::parse();
    // Held until exit: dropping it flushes the log file.
    let log = match cli.log_level.as_deref().map(rawpv::log::init) {
        None | Some(Ok(None)) => None,
        Some(Ok(Some((guard, path)))) => {
            // Said before the screen is taken, so the user knows where to look (STYLE 4.10).
            eprintln!("rawpv: logging to {}", path.display());
            tracing::info!(
                version = env!("CARGO_PKG_VERSION"),
                log = %path.display(),
                "rawpv started"
            );
            Some(guard)
        }
        Some(Err(e)) => {
            eprintln!("rawpv: {e}");
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rawpv: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = runtime.block_on(run(cli));
    // A fatal signal ended the screen (restored by now): exit as the shell expects, 128+N.
    let code = rawpv::signals::fatal().map_or(code, |n| 128 + n);
    tracing::info!(code, "rawpv exits");
    drop(log);
    std::process::exit(code);
}

async fn run(cli: Cli) -> i32 {
    match cli.command {
        // Boxed: the viewer's future holds the whole app (clippy::large_futures).
        Some(Command::Demo) => Box::pin(open(SourceKind::Demo, &cli.open)).await,
        Some(Command::Print {
            input,
            detail,
            all,
            color,
            width,
            config,
            redact,
        }) => cmd::print::run(&input, detail, all, color, width, config.as_deref(), redact).await,
        Some(Command::Convert { input }) => cmd::convert::run(&input).await,
        Some(Command::Check { input, format }) => cmd::check::run(&input, format).await,
        Some(Command::Stats(args)) => cmd::stats::run(&args).await,
        Some(Command::Search(args)) => cmd::search::run(&args),
        Some(Command::Sessions(args)) => cmd::search::sessions(&args),
        Some(Command::Patch { input, files }) => cmd::patch::run(&input, &files).await,
        Some(Command::Audit { input, json }) => cmd::audit::run(&input, json).await,
        Some(Command::Export {
            mut input,
            output,
            format,
            depth,
            no_redact,
            max_lines,
        }) => {
            let args = cmd::export::Args {
                more: std::mem::take(&mut input.more),
                output,
                format,
                depth,
                no_redact,
                max_lines,
            };
            cmd::export::run(&input, &args).await
        }
        Some(Command::Serve {
            files,
            follow,
            retain_bytes,
            listen,
            speed,
            token_file,
            max_frame_bytes,
            max_clients,
        }) => {
            cmd::serve::run(cmd::serve::Options {
                files,
                follow,
                retain_bytes,
                listen,
                speed,
                token_file,
                max_frame_bytes,
                max_clients,
            })
            .await
        }
        None if cli.open.latest => {
            if let Err(e) = color_eyre::install() {
                eprintln!("rawpv: {e}");
            }
            match Box::pin(app::run_latest(&cli.open)).await {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("rawpv: {e:?}");
                    2
                }
            }
        }
        None if cli.open.input.is_none()
            && std::io::IsTerminal::is_terminal(&std::io::stdin())
            && !cli.open.replay =>
        {
            // No input on a terminal: the session browser.
            if let Err(e) = color_eyre::install() {
                eprintln!("rawpv: {e}");
            }
            match app::run_browse(&cli.open).await {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("rawpv: {e:?}");
                    2
                }
            }
        }
        None if !cli.open.more.is_empty()
            || cli
                .open
                .input
                .as_deref()
                .is_some_and(|i| i != "-" && std::path::Path::new(i).is_dir()) =>
        {
            // Several inputs, or a directory of them (issue 24).
            let args: Vec<String> = cli
                .open
                .input
                .iter()
                .chain(&cli.open.more)
                .cloned()
                .collect();
            let args = match rawpv::source::merge::expand_dirs(&args) {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("rawpv: {e}");
                    return 2;
                }
            };
            let kinds: Vec<SourceKind> = args
                .iter()
                .map(|a| SourceKind::from_arg(a, cli.open.follow))
                .collect();
            if let [one] = kinds.as_slice() {
                return Box::pin(open(one.clone(), &cli.open)).await;
            }
            if let Err(e) = color_eyre::install() {
                eprintln!("rawpv: {e}");
            }
            match Box::pin(app::run_many(kinds, &cli.open)).await {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("rawpv: {e:?}");
                    2
                }
            }
        }
        None => {
            let kind = match &cli.open.input {
                // `rawpv --log-level debug demo`: after a global flag clap reads `demo` as the
                // input; it is the demo unless a file of that name exists (as for `print demo`).
                Some(i) if i == "demo" && !std::path::Path::new(i).exists() => SourceKind::Demo,
                Some(i) => SourceKind::from_arg(i, cli.open.follow),
                // `producer | rawpv`: a pipe on stdin is read live, like `rawpv -`.
                None if !std::io::IsTerminal::is_terminal(&std::io::stdin()) => SourceKind::Stdin,
                None => SourceKind::Demo,
            };
            Box::pin(open(kind, &cli.open)).await
        }
    }
}

async fn open(kind: SourceKind, open: &rawpv::cli::OpenArgs) -> i32 {
    if let Err(e) = color_eyre::install() {
        eprintln!("rawpv: {e}");
    }
    // Boxed: the viewer's state is large (clippy::large_futures).
    match Box::pin(app::run(kind, open)).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rawpv: {e:?}");
            2
        }
    }
}
