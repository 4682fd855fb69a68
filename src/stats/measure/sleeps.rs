//! Times from the `sleep` in a command line.
//!
//! The usual way to take two snapshots a minute apart is one line at the
//! prompt: `perfquery -x; sleep 60; perfquery -x`, or a loop
//! (`for i in 1 2 3; do nvidia-smi nvlink -e; sleep 60; done`). Neither
//! prints a time, but the line says how far apart the readings are: the
//! sleeps between them (plus the commands' own run time, which is why a
//! short sleep is no interval, see [`MIN_SECONDS`]).
//!
//! Only plain lines are read: steps joined by `;`, `&&` or `||`, or one
//! `for`/`while`/`until` loop whose body is such steps. Every step that
//! prints must be one section of the output: if the count of sections does
//! not match the command's, which output belongs to which step is unknown
//! and no time is given.

/// Shortest time between two readings a `sleep` stands for: the tools' own
/// run time (a second or two for `nvidia-smi`, more for a fabric-wide
/// query) is then a small part of the interval, and rates are at most a few
/// per cent high. Shorter sleeps give no interval (`--interval` does).
pub const MIN_SECONDS: f64 = 10.0;

/// One step of a command line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// `sleep N` (seconds).
    Sleep(f64),
    /// A step that prints nothing a parser reads (`echo ---`, `clear`).
    Silent,
    /// A step that prints one output.
    Prints,
}

/// The seconds into the command at which each of its `outputs` outputs
/// was printed (the first at 0), when the command is a plain sequence or
/// loop with a `sleep` and prints exactly that many outputs.
#[must_use]
pub fn output_offsets(command: &str, outputs: usize) -> Option<Vec<f64>> {
    if outputs < 2 {
        return None;
    }
    let parts: Vec<&str> = crate::parse::text::command_steps(command).collect();
    let offsets = match parts.iter().position(|p| is_loop_head(p)) {
        Some(0) => loop_offsets(&parts, outputs)?,
        Some(_) => return None,
        None => {
            let steps: Vec<Step> = parts.iter().map(|p| classify(p)).collect::<Option<_>>()?;
            let offsets = offsets_of(&steps);
            (offsets.len() == outputs).then_some(offsets)?
        }
    };
    let first = *offsets.first()?;
    let last = *offsets.last()?;
    (last > first).then(|| offsets.iter().map(|o| o - first).collect())
}

fn is_loop_head(step: &str) -> bool {
    ["for ", "while ", "until "]
        .iter()
        .any(|k| step.starts_with(k))
}

/// What a step does; `None` for shell syntax this reader does not follow.
fn classify(step: &str) -> Option<Step> {
    if backgrounds(step) {
        // `cmd &`: it prints when it likes.
        return None;
    }
    let mut words = step.split_whitespace();
    let first = words.next()?;
    match first {
        "sleep" => {
            let seconds = words.map(sleep_seconds).sum::<Option<f64>>()?;
            (seconds > 0.0).then_some(Step::Sleep(seconds))
        }
        "echo" | "printf" | "clear" | "true" | ":" => Some(Step::Silent),
        "if" | "then" | "else" | "elif" | "fi" | "case" | "esac" | "do" | "done" | "for"
        | "while" | "until" | "watch" => None,
        _ if first.contains('=') && !first.starts_with('-') => Some(Step::Silent),
        _ => Some(Step::Prints),
    }
}

/// Whether a step holds a `&` that is not part of a redirection (`2>&1`,
/// `&>`): a command sent to the background.
fn backgrounds(step: &str) -> bool {
    let bytes = step.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'&'
            && i.checked_sub(1).and_then(|p| bytes.get(p)) != Some(&b'>')
            && bytes.get(i + 1) != Some(&b'>')
    })
}

/// `60`, `60s`, `1.5m`, `1h` in seconds (GNU sleep sums its arguments).
fn sleep_seconds(word: &str) -> Option<f64> {
    let (number, scale) = match word.char_indices().last()? {
        (i, 's') => (word.get(..i)?, 1.0),
        (i, 'm') => (word.get(..i)?, 60.0),
        (i, 'h') => (word.get(..i)?, 3600.0),
        (i, 'd') => (word.get(..i)?, 86400.0),
        _ => (word, 1.0),
    };
    let n: f64 = number.parse().ok()?;
    (n.is_finite() && n >= 0.0).then_some(n * scale)
}

/// The offset of each printing step: the sleeps before it.
fn offsets_of(steps: &[Step]) -> Vec<f64> {
    let mut at = 0.0;
    let mut out = Vec::new();
    for step in steps {
        match step {
            Step::Sleep(s) => at += s,
            Step::Prints => out.push(at),
            Step::Silent => {}
        }
    }
    out
}

/// `for … ; do BODY; done` (or `while`/`until`): the body's printing steps
/// once per iteration, an iteration as long as its sleeps (a `while sleep
/// 60` condition counts as one).
fn loop_offsets(parts: &[&str], outputs: usize) -> Option<Vec<f64>> {
    let (head, rest) = parts.split_first()?;
    // `for i in 1 2 do x` is not shell; `while sleep 60` sleeps per round.
    let mut iteration: Vec<Step> = Vec::new();
    if let Some(condition) = head
        .strip_prefix("while ")
        .or_else(|| head.strip_prefix("until "))
    {
        match classify(condition.trim())? {
            Step::Sleep(s) => iteration.push(Step::Sleep(s)),
            Step::Silent => {}
            Step::Prints => return None,
        }
    }
    let done = rest.iter().position(|p| *p == "done")?;
    if rest.get(done + 1..).is_some_and(|after| !after.is_empty()) {
        return None;
    }
    let body = rest.get(..done)?;
    let (first, others) = body.split_first()?;
    iteration.push(classify(first.strip_prefix("do ")?.trim())?);
    for step in others {
        iteration.push(classify(step)?);
    }
    let period: f64 = iteration
        .iter()
        .map(|s| match s {
            Step::Sleep(s) => *s,
            _ => 0.0,
        })
        .sum();
    let per_round = offsets_of(&iteration);
    if per_round.is_empty() || period <= 0.0 || outputs % per_round.len() != 0 {
        return None;
    }
    let rounds = outputs / per_round.len();
    #[allow(clippy::cast_precision_loss)]
    let offsets = (0..rounds)
        .flat_map(|k| per_round.iter().map(move |o| k as f64 * period + o))
        .collect();
    Some(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_gives_its_sleeps() {
        assert_eq!(
            output_offsets("perfquery -x; sleep 60; perfquery -x", 2),
            Some(vec![0.0, 60.0])
        );
        assert_eq!(
            output_offsets("perfquery -x && sleep 1m && perfquery -x", 2),
            Some(vec![0.0, 60.0])
        );
        assert_eq!(
            output_offsets(
                "perfquery -x 12 1; perfquery -x 13 1; echo ---; sleep 30; perfquery -x 12 1; perfquery -x 13 1",
                4
            ),
            Some(vec![0.0, 0.0, 30.0, 30.0])
        );
        // Sleep first: the readings are measured from the first one.
        assert_eq!(
            output_offsets(
                "sleep 5; nvidia-smi nvlink -e; sleep 60; nvidia-smi nvlink -e",
                2
            ),
            Some(vec![0.0, 60.0])
        );
    }

    #[test]
    fn loops_repeat_their_body() {
        assert_eq!(
            output_offsets("for i in 1 2 3; do nvidia-smi nvlink -e; sleep 60; done", 3),
            Some(vec![0.0, 60.0, 120.0])
        );
        assert_eq!(
            output_offsets("while sleep 30; do perfquery -x; done", 2),
            Some(vec![0.0, 30.0])
        );
        assert_eq!(
            output_offsets("for i in $(seq 3); do perfquery -x; sleep 60; done", 3),
            Some(vec![0.0, 60.0, 120.0])
        );
        assert_eq!(
            output_offsets("for i in 1 2; do perfquery -x & sleep 60; done", 2),
            None,
            "a reading in the background"
        );
        assert_eq!(
            output_offsets(
                "for i in 1 2; do perfquery -x; sleep 10; perfquery -x 2 1; done",
                3
            ),
            None,
            "three outputs of a two-output round"
        );
    }

    #[test]
    fn no_sleep_or_mismatched_outputs_give_nothing() {
        assert_eq!(output_offsets("perfquery -x; perfquery -x", 2), None);
        assert_eq!(
            output_offsets("perfquery -x; sleep 60; perfquery -x", 3),
            None
        );
        assert_eq!(
            output_offsets("perfquery -x; sleep 60; perfquery -x", 1),
            None
        );
        assert_eq!(
            output_offsets("perfquery -x; sleep $T; perfquery -x", 2),
            None
        );
        assert_eq!(output_offsets("watch -n 60 perfquery -x", 2), None);
        assert_eq!(
            output_offsets("if true; then perfquery -x; sleep 9; perfquery -x; fi", 2),
            None
        );
    }

    proptest::proptest! {
        /// Any line: no panic, and times only as many as outputs, from 0,
        /// never going back.
        #[test]
        fn any_command_gives_ordered_offsets_or_none(
            command in "(perfquery -x|sleep [0-9]{1,3}[smh]?|echo -|for i in 1 2|while sleep 9|do perfquery|done|[a-z ]{0,6}|[;&|]{1,2}| ){0,12}",
            outputs in 0usize..8,
        ) {
            if let Some(offsets) = output_offsets(&command, outputs) {
                proptest::prop_assert_eq!(offsets.len(), outputs);
                proptest::prop_assert_eq!(offsets.first().copied(), Some(0.0));
                proptest::prop_assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{:?}", offsets);
            }
        }
    }

    #[test]
    fn sleep_units_and_sums() {
        assert_eq!(sleep_seconds("60"), Some(60.0));
        assert_eq!(sleep_seconds("1.5m"), Some(90.0));
        assert_eq!(sleep_seconds("2h"), Some(7200.0));
        assert_eq!(sleep_seconds("x"), None);
        assert_eq!(classify("sleep 1m 30"), Some(Step::Sleep(90.0)));
        assert_eq!(classify("sleep 0"), None);
    }
}
