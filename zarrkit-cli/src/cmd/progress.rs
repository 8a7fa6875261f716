//! Progress bars on stderr, shared by every command: shown only when stderr
//! is a terminal, the work is large enough to be worth one, and `--quiet`
//! was not given.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences every progress bar (the global `--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given: commands print no progress and no notes.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A bar counting `total` chunks (or other items, named by `unit`), or
/// `None` when it is not worth showing: `total` is at most `threshold`,
/// stderr is not a terminal, or `--quiet` was given.
pub fn items(total: u64, threshold: u64, unit: &str) -> Option<ProgressBar> {
    let template = format!("{{wide_bar}} {{pos}}/{{len}} {unit} eta {{eta}} {{msg}}");
    bar(total, threshold, &template)
}

/// A bar counting `total` bytes, or `None` as for [`items`].
pub fn bytes(total: u64, threshold: u64) -> Option<ProgressBar> {
    bar(
        total,
        threshold,
        "{wide_bar} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
    )
}

fn bar(total: u64, threshold: u64, template: &str) -> Option<ProgressBar> {
    if total <= threshold || quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// A spinner with `message` and the time elapsed, for work of unknown
/// progress (one library call, such as erasing a prefix) expected to be
/// long (`long`), or `None` as for [`items`].
pub fn spinner(message: &str, long: bool) -> Option<ProgressBar> {
    if !long || quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}
