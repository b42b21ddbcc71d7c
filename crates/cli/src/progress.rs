//! What `watch` shows: on a terminal, a compact status view redrawn in
//! place (one line per step, a symbol and elapsed time); elsewhere, one plain
//! line per event.

use crate::format;
use crate::wire::{Event, Run, is_final_status};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Where progress goes. Standard output on a terminal gets the live view.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
}

/// Step lines the live view shows at most; the rest are summed up.
const MAX_STEP_LINES: usize = 20;
/// Events closer together than this share one redraw.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub struct View {
    state: State,
    mode: Mode,
}

enum Mode {
    Live(Live),
    Lines(Sink),
}

struct Live {
    color: bool,
    /// Lines of the last frame, to move back over.
    drawn: usize,
    frames: usize,
    last_draw: Option<Instant>,
}

/// The run as the events so far describe it.
#[derive(Debug, Clone)]
pub struct State {
    pub id: String,
    pub workflow: String,
    pub status: String,
    pub attempt: i32,
    pub message: Option<String>,
    pub started: Option<DateTime<Utc>>,
    pub finished: Option<DateTime<Utc>>,
    pub steps: Vec<StepState>,
    index: HashMap<String, usize>,
}

#[derive(Debug, Clone)]
pub struct StepState {
    pub name: String,
    pub status: String,
    pub attempt: i32,
    pub message: Option<String>,
    pub started: Option<DateTime<Utc>>,
    pub finished: Option<DateTime<Utc>>,
}

fn step_is_final(status: &str) -> bool {
    !matches!(status, "pending" | "running")
}

impl State {
    pub fn new(run: &Run) -> State {
        let mut state = State {
            id: run.id.clone(),
            workflow: run.workflow_name.clone(),
            status: String::new(),
            attempt: 1,
            message: None,
            started: None,
            finished: None,
            steps: Vec::new(),
            index: HashMap::new(),
        };
        state.sync(run);
        state
    }

    /// Takes everything a fresh read of the run says.
    pub fn sync(&mut self, run: &Run) {
        self.status = run.status.clone();
        self.attempt = run.attempt;
        self.message = run.message.clone();
        self.started = run.started_at;
        self.finished = run.finished_at;
        for s in &run.steps {
            let step = self.step_mut(&s.name);
            step.status = s.status.clone();
            step.attempt = s.attempt;
            step.message = s.message.clone();
            step.started = s.started_at;
            step.finished = s.finished_at;
        }
    }

    fn step_mut(&mut self, name: &str) -> &mut StepState {
        let i = *self.index.entry(name.to_owned()).or_insert_with(|| {
            self.steps.push(StepState {
                name: name.to_owned(),
                status: "pending".to_owned(),
                attempt: 0,
                message: None,
                started: None,
                finished: None,
            });
            self.steps.len() - 1
        });
        &mut self.steps[i]
    }

    pub fn apply(&mut self, e: &Event) {
        match &e.step {
            Some(name) => {
                let step = self.step_mut(name);
                let status = e.reported_status();
                step.status = status.to_owned();
                if let Some(attempt) = e.attempt() {
                    step.attempt = attempt;
                }
                match status {
                    "running" => (step.started, step.finished) = (Some(e.created_at), None),
                    "pending" => (step.started, step.finished) = (None, None),
                    _ => step.finished = Some(e.created_at),
                }
                step.message = e.message.clone();
            }
            None => {
                if let Some(status) = &e.status {
                    self.status = status.clone();
                }
                if let Some(attempt) = e.attempt() {
                    self.attempt = attempt;
                }
                match self.status.as_str() {
                    "running" => {
                        self.started.get_or_insert(e.created_at);
                    }
                    "queued" => self.finished = None,
                    s if is_final_status(s) => self.finished = Some(e.created_at),
                    _ => {}
                }
                if e.message.is_some() {
                    self.message = e.message.clone();
                }
            }
        }
    }

    pub fn failed_steps(&self) -> impl Iterator<Item = &StepState> {
        self.steps.iter().filter(|s| s.status == "failed")
    }
}

impl View {
    pub fn new(run: &Run, sink: Sink) -> View {
        let live = sink == Sink::Stdout
            && io::stdout().is_terminal()
            && std::env::var("TERM").is_ok_and(|t| t != "dumb");
        let mode = if live {
            Mode::Live(Live {
                color: std::env::var_os("NO_COLOR").is_none(),
                drawn: 0,
                frames: 0,
                last_draw: None,
            })
        } else {
            Mode::Lines(sink)
        };
        View {
            state: State::new(run),
            mode,
        }
    }

    pub fn is_live(&self) -> bool {
        matches!(self.mode, Mode::Live(_))
    }

    pub fn event(&mut self, e: &Event) -> io::Result<()> {
        self.state.apply(e);
        match &mut self.mode {
            Mode::Lines(sink) => write_line(*sink, &line(e)),
            Mode::Live(live) => {
                if live.last_draw.is_none_or(|t| t.elapsed() >= REDRAW_EVERY) {
                    live.draw(&self.state, false)?;
                }
                Ok(())
            }
        }
    }

    /// Redraws the live view (elapsed times move on).
    pub fn tick(&mut self) -> io::Result<()> {
        match &mut self.mode {
            Mode::Live(live) => live.draw(&self.state, false),
            Mode::Lines(_) => Ok(()),
        }
    }

    /// Shows the run's final state; when it did not succeed, says why on
    /// standard error.
    pub fn finish(&mut self, run: &Run) -> io::Result<()> {
        self.state.sync(run);
        if let Mode::Live(live) = &mut self.mode {
            live.draw(&self.state, true)?;
        }
        if run.status != "succeeded" {
            eprint!("{}", summary(&self.state));
        }
        Ok(())
    }

    /// Leaves the terminal tidy when the user stops watching.
    pub fn interrupt(&mut self) -> io::Result<()> {
        if let Mode::Live(live) = &mut self.mode {
            live.draw(&self.state, true)?;
        }
        eprintln!(
            "stopped watching; {id} goes on (couler runs watch {id})",
            id = self.state.id
        );
        Ok(())
    }
}

fn write_line(sink: Sink, line: &str) -> io::Result<()> {
    match sink {
        Sink::Stdout => writeln!(io::stdout().lock(), "{line}"),
        Sink::Stderr => writeln!(io::stderr().lock(), "{line}"),
    }
}

/// One event as a plain line: `<time> run <what>` or `<time> step <name> <status>`.
pub fn line(e: &Event) -> String {
    let mut out = format!("{} ", format::time(e.created_at));
    match &e.step {
        Some(step) => {
            let _ = write!(out, "step {step} {}", e.reported_status());
        }
        None => {
            let _ = write!(out, "run {}", e.action().replace('_', " "));
        }
    }
    if let Some(attempt) = e.attempt().filter(|&a| a > 1) {
        let _ = write!(out, " (attempt {attempt})");
    }
    if let Some(message) = &e.message {
        let _ = write!(out, ": {message}");
    }
    out
}

/// Why a run did not succeed, with its failed steps.
pub fn summary(state: &State) -> String {
    let mut out = format!("run {} {}", state.id, state.status);
    if let Some(message) = &state.message {
        let _ = write!(out, ": {message}");
    }
    out.push('\n');
    let failed: Vec<&StepState> = state.failed_steps().collect();
    if !failed.is_empty() {
        out.push_str("failed steps:\n");
        for s in failed {
            let _ = write!(out, "  {}", s.name);
            if s.attempt > 1 {
                let _ = write!(out, " (attempt {})", s.attempt);
            }
            if let Some(message) = &s.message {
                let _ = write!(out, ": {message}");
            }
            out.push('\n');
        }
    }
    out
}

impl Live {
    fn draw(&mut self, state: &State, done: bool) -> io::Result<()> {
        let spinner = (!done).then(|| SPINNER[self.frames % SPINNER.len()]);
        let lines = frame(state, Utc::now(), spinner, self.color);
        let mut out = String::new();
        if self.drawn > 0 {
            let _ = write!(out, "\x1b[{}A\r", self.drawn);
        }
        // No wrapping while drawing, so each line takes exactly one row.
        out.push_str("\x1b[?7l");
        for l in &lines {
            out.push_str(l);
            out.push_str("\x1b[K\n");
        }
        out.push_str("\x1b[J\x1b[?7h");
        let mut stdout = io::stdout().lock();
        stdout.write_all(out.as_bytes())?;
        stdout.flush()?;
        self.drawn = lines.len();
        self.frames += 1;
        self.last_draw = Some(Instant::now());
        Ok(())
    }
}

fn symbol(status: &str, spinner: Option<&'static str>) -> (&'static str, &'static str) {
    const GREEN: &str = "\x1b[32m";
    const RED: &str = "\x1b[31m";
    const YELLOW: &str = "\x1b[33m";
    const DIM: &str = "\x1b[2m";
    match status {
        "succeeded" | "cached" => ("✓", GREEN),
        "failed" => ("✗", RED),
        "cancelled" => ("⊘", YELLOW),
        "skipped" => ("↷", DIM),
        "pending" | "queued" => ("·", DIM),
        "running" | "planning" => (spinner.unwrap_or("▸"), YELLOW),
        _ => ("?", DIM),
    }
}

fn paint(text: &str, color: &str, on: bool) -> String {
    if on {
        format!("{color}{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// The live view's lines: the run, then its steps (the most telling ones
/// when there are too many to show).
pub fn frame(
    state: &State,
    now: DateTime<Utc>,
    spinner: Option<&'static str>,
    color: bool,
) -> Vec<String> {
    let done = state
        .steps
        .iter()
        .filter(|s| step_is_final(&s.status))
        .count();
    let (sym, tint) = symbol(&state.status, spinner);
    let mut header = format!(
        "{} {}  {}  {}",
        paint(sym, tint, color),
        state.id,
        state.workflow,
        state.status
    );
    if state.attempt > 1 {
        let _ = write!(header, " (attempt {})", state.attempt);
    }
    if let Some(took) = format::elapsed(state.started, state.finished, now) {
        let _ = write!(header, "  {took}");
    }
    if !state.steps.is_empty() {
        let _ = write!(header, "  {done}/{} steps done", state.steps.len());
    }
    let mut lines = vec![header];

    let shown = pick_steps(state);
    let width = shown
        .iter()
        .map(|&i| state.steps[i].name.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for &i in &shown {
        let s = &state.steps[i];
        let (sym, tint) = symbol(&s.status, spinner);
        let mut l = format!(
            "  {} {:<width$}  {:<9}",
            paint(sym, tint, color),
            s.name,
            s.status
        );
        if let Some(took) = format::elapsed(s.started, s.finished, now) {
            let _ = write!(l, "  {took:>6}");
        }
        if let Some(message) = &s.message {
            let _ = write!(l, "  {message}");
        }
        lines.push(l.trim_end().to_owned());
    }
    let hidden = state.steps.len() - shown.len();
    if hidden > 0 {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for (i, s) in state.steps.iter().enumerate() {
            if shown.binary_search(&i).is_err() {
                match counts.iter_mut().find(|(k, _)| *k == s.status) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((&s.status, 1)),
                }
            }
        }
        let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        lines.push(format!("  … {hidden} more: {}", counts.join(", ")));
    }
    lines
}

/// Which steps fit: failed and running first, then pending, then the most
/// recently finished; shown in their original order.
fn pick_steps(state: &State) -> Vec<usize> {
    let n = state.steps.len();
    if n <= MAX_STEP_LINES {
        return (0..n).collect();
    }
    let rank = |s: &StepState| match s.status.as_str() {
        "failed" => 0,
        "running" => 1,
        "pending" => 2,
        _ => 3,
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| {
        let s = &state.steps[i];
        (rank(s), std::cmp::Reverse(s.finished), i)
    });
    // One line goes to the summary of the rest.
    let mut shown: Vec<usize> = order.into_iter().take(MAX_STEP_LINES - 1).collect();
    shown.sort_unstable();
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(steps: serde_json::Value) -> Run {
        serde_json::from_value(json!({
            "id": "run_1", "workflow_name": "diamond", "status": "running", "attempt": 1,
            "created_at": "2025-01-01T00:00:00Z", "started_at": "2025-01-01T00:00:00Z",
            "steps": steps,
        }))
        .unwrap()
    }

    fn event(id: i64, kind: &str, step: Option<&str>, status: &str, at: &str) -> Event {
        serde_json::from_value(json!({
            "id": id, "kind": kind, "step": step, "status": status, "created_at": at,
        }))
        .unwrap()
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn events_move_steps_along() {
        let mut state = State::new(&run(json!([])));
        state.apply(&event(
            1,
            "step.running",
            Some("a"),
            "running",
            "2025-01-01T00:00:01Z",
        ));
        state.apply(&event(
            2,
            "step.running",
            Some("b"),
            "running",
            "2025-01-01T00:00:02Z",
        ));
        state.apply(&event(
            3,
            "step.succeeded",
            Some("a"),
            "succeeded",
            "2025-01-01T00:00:04Z",
        ));
        let lines = frame(&state, at("2025-01-01T00:01:05Z"), Some("⠋"), false);
        assert_eq!(
            lines,
            [
                "⠋ run_1  diamond  running  1m05s  1/2 steps done",
                "  ✓ a  succeeded      3s",
                "  ⠋ b  running     1m03s",
            ]
        );
    }

    #[test]
    fn many_steps_keep_the_telling_ones() {
        let steps: Vec<serde_json::Value> = (0..100)
            .map(|i| {
                let status = match i {
                    7 => "failed",
                    50 => "running",
                    _ => "succeeded",
                };
                json!({"name": format!("s{i:03}"), "status": status, "attempt": 1})
            })
            .collect();
        let lines = frame(
            &State::new(&run(json!(steps))),
            Utc::now(),
            Some("⠋"),
            false,
        );
        assert_eq!(lines.len(), 1 + MAX_STEP_LINES);
        assert!(
            lines.iter().any(|l| l.contains("s007  failed")),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("s050  running")),
            "{lines:#?}"
        );
        assert_eq!(lines.last().unwrap(), "  … 81 more: 81 succeeded");
    }

    #[test]
    fn lines_name_what_happened() {
        let mut e = event(4, "run.retried", None, "queued", "2025-01-01T00:00:00Z");
        e.data = json!({"attempt": 2});
        assert_eq!(line(&e), "2025-01-01T00:00:00Z run retried (attempt 2)");
        let mut e = event(
            5,
            "step.failed",
            Some("b"),
            "failed",
            "2025-01-01T00:00:09Z",
        );
        e.message = Some("exit status 1".into());
        assert_eq!(
            line(&e),
            "2025-01-01T00:00:09Z step b failed: exit status 1"
        );
    }
}
