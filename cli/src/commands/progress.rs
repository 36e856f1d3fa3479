//! Progress of a long command on stderr: a bar when stderr is a terminal, nothing when it is piped
//! (a log file gets the summary alone). Lines printed meanwhile go above the bar.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// `what` names the items counted ("files", "requests").
    pub fn new(what: &'static str) -> Progress {
        let target =
            if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(None, target);
        let template = format!("{{spinner}} {{elapsed_precise}} {{human_pos}} {what} ({{per_sec}}) {{msg}}");
        bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_spinner()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar }
    }

    /// Once the count is known (the walk ended), the spinner becomes a bar with a time left.
    pub fn set_total(&self, total: u64, what: &'static str) {
        self.bar.set_length(total);
        let template = format!(
            "{{elapsed_precise}} [{{wide_bar}}] {{human_pos}}/{{human_len}} {what} ({{per_sec}}, {{eta}} left) {{msg}}"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            self.bar.set_style(style);
        }
    }

    pub fn advance(&self) {
        self.bar.inc(1);
    }

    pub fn message(&self, text: String) {
        self.bar.set_message(text);
    }

    /// Runs `print` with the bar cleared, so a line printed to the same terminal is not torn.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        self.bar.suspend(print)
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
