//! `zarrkit completions` and `zarrkit man`: shell completion scripts and man
//! pages, generated from the command line's clap definitions (`Cli::command()`),
//! so every subcommand and option, present and future, is covered.

use anyhow::Context;
use clap::Args;
use clap_complete::Shell;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The text after the options in `completions --help`.
pub const COMPLETIONS_AFTER_LONG_HELP: &str = "\
Install the script where the shell looks for completions, for example:
  bash:        zarrkit completions bash > ~/.local/share/bash-completion/completions/zarrkit
  zsh:         zarrkit completions zsh > ~/.zfunc/_zarrkit   (with `fpath+=~/.zfunc` before `compinit`)
  fish:        zarrkit completions fish > ~/.config/fish/completions/zarrkit.fish
  elvish:      zarrkit completions elvish >> ~/.config/elvish/rc.elv
  powershell:  zarrkit completions powershell >> $PROFILE

Or load it into the running shell: `source <(zarrkit completions bash)`.";

/// The text after the options in `man --help`.
pub const MAN_AFTER_LONG_HELP: &str = "\
Examples:
  zarrkit man | man -l -
  zarrkit man --out-dir ~/.local/share/man/man1   (then `man zarrkit-ls`)

--out-dir writes `zarrkit.1` and one `zarrkit-<command>.1` per command \
(creating the directory if needed) and prints the path of each page written.";

/// Arguments of `zarrkit completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print the completion script for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `zarrkit man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command into this directory instead of printing
    /// the main page
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Runs `zarrkit completions`: the script for `args.shell` of `command`
/// (the whole command line) on `out`.
///
/// # Errors
/// If writing to `out` fails.
pub fn run(
    args: &CompletionsArgs,
    mut command: clap::Command,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// Runs `zarrkit man`: the main page on `out`, or with `--out-dir` one page
/// per command, each path printed on `out`.
///
/// # Errors
/// If the directory or a page cannot be written, or writing to `out` fails.
pub fn run_man(args: &ManArgs, command: clap::Command, out: &mut impl Write) -> anyhow::Result<()> {
    let Some(dir) = &args.out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        out.write_all(&page)?;
        return Ok(());
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the directory `{}`", dir.display()))?;
    // Building names each subcommand as `git` names its pages
    // (`zarrkit-ls`, `zarrkit-attrs-get`): the page's file name and title.
    let mut command = command.disable_help_subcommand(true);
    command.build();
    write_pages(&command, dir, out)
}

/// Writes the page of `command` and of each of its subcommands, at any
/// depth, into `dir`, printing each path on `out`.
fn write_pages(command: &clap::Command, dir: &Path, out: &mut impl Write) -> anyhow::Result<()> {
    let page = clap_mangen::Man::new(command.clone());
    let path = dir.join(page.get_filename());
    page.generate_to(dir)
        .with_context(|| format!("cannot write the man page `{}`", path.display()))?;
    writeln!(out, "{}", path.display())?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, out)?;
    }
    Ok(())
}
