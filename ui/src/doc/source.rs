//! What each line of the script's text became: part of a turn, or skipped and why (a heading, a
//! stage direction, narration, metadata, a comment), or blank. The parser accounts for every
//! non-blank line ([`Line::source_lines`] and [`Episode::skipped`]); this turns that into what the
//! editor draws, so an author sees at a glance which lines will not be spoken: the raw view greys
//! them and names their kind, the lines view lists them between the turns.
//!
//! It is worked out once per parse (in [`super::Document::edited`]), not on every frame: the
//! editor redraws at the display's rate and a long script has thousands of lines.
//!
//! [`Line::source_lines`]: engine::script::Line::source_lines

use engine::script::{Episode, LineKind};

/// What one source line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceRole {
    /// Blank, or not accounted for (the script does not parse).
    Blank,
    /// Part of turn `turn` (an index into [`Episode::lines`]; the first, when a line holds
    /// several turns).
    Spoken { turn: usize },
    /// Not spoken: the parser took it for this.
    Skipped(LineKind),
}

/// Consecutive skipped lines of one kind, as the lines view lists them between turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRun {
    /// The turn they come before ([`Episode::lines`]`.len()` after the last one).
    pub before_turn: usize,
    pub kind: LineKind,
    /// The first and the last line's numbers (1-based; blank lines may lie between).
    pub first_line: usize,
    pub last_line: usize,
    /// The lines as written, trimmed.
    pub texts: Vec<String>,
}

/// Every source line's role and the runs of skipped lines, for one parse of the script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    roles: Vec<SourceRole>,
    runs: Vec<SkippedRun>,
}

impl SourceMap {
    /// Maps the lines of `episode`, parsed from a text of `line_count` lines.
    #[must_use]
    pub fn of(episode: &Episode, line_count: usize) -> Self {
        let mut roles = vec![SourceRole::Blank; line_count];
        let mut set = |line: usize, role: SourceRole| {
            if let Some(slot) = line.checked_sub(1).and_then(|i| roles.get_mut(i)) {
                if *slot == SourceRole::Blank {
                    *slot = role;
                }
            }
        };
        for (turn, line) in episode.lines.iter().enumerate() {
            for &n in &line.source_lines {
                set(n, SourceRole::Spoken { turn });
            }
        }
        for s in &episode.skipped {
            set(s.position.line, SourceRole::Skipped(s.kind));
        }
        // The turn a skipped line comes before: the first whose first line is after it.
        let starts: Vec<usize> = episode
            .lines
            .iter()
            .map(|l| l.source_lines.first().copied().unwrap_or(l.position.line))
            .collect();
        let mut runs: Vec<SkippedRun> = Vec::new();
        let mut last_line = 0;
        for s in &episode.skipped {
            let line = s.position.line;
            let before_turn = starts.partition_point(|&start| start <= line);
            match runs.last_mut() {
                Some(run)
                    if run.kind == s.kind
                        && run.before_turn == before_turn
                        && only_blank_between(&roles, last_line, line) =>
                {
                    run.texts.push(s.text.clone());
                    run.last_line = line;
                }
                _ => runs.push(SkippedRun {
                    before_turn,
                    kind: s.kind,
                    first_line: line,
                    last_line: line,
                    texts: vec![s.text.clone()],
                }),
            }
            last_line = line;
        }
        Self { roles, runs }
    }

    /// What line `line` (1-based) is; [`SourceRole::Blank`] past the end.
    #[must_use]
    pub fn role(&self, line: usize) -> SourceRole {
        line.checked_sub(1)
            .and_then(|i| self.roles.get(i))
            .copied()
            .unwrap_or(SourceRole::Blank)
    }

    /// The runs of skipped lines, in order.
    #[must_use]
    pub fn runs(&self) -> &[SkippedRun] {
        &self.runs
    }
}

/// True when every line strictly between `from` and `to` (1-based) is blank: two skipped lines
/// of one kind with nothing but blank lines between them make one run.
fn only_blank_between(roles: &[SourceRole], from: usize, to: usize) -> bool {
    (from + 1..to).all(|n| roles.get(n - 1).is_none_or(|r| *r == SourceRole::Blank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::script::ParseOptions;
    use SourceRole::{Blank, Skipped, Spoken};

    #[test]
    fn every_line_is_spoken_skipped_with_its_kind_or_blank() {
        let text =
            "---\ntitle: Pilot\n---\n# Part one\n\nAnn: Hello\nthere.\n[Bob enters.]\nBob: Hi.\n";
        let ep = Episode::parse("t.md", text, &ParseOptions::default()).expect("parses");
        let map = SourceMap::of(&ep, text.lines().count());
        let roles: Vec<SourceRole> = (1..=10).map(|n| map.role(n)).collect();
        assert_eq!(
            roles,
            [
                Skipped(LineKind::Metadata),
                Skipped(LineKind::Metadata),
                Skipped(LineKind::Metadata),
                Skipped(LineKind::Heading),
                Blank,
                Spoken { turn: 0 },
                Spoken { turn: 0 },
                Skipped(LineKind::Direction),
                Spoken { turn: 1 },
                Blank,
            ]
        );
        let runs: Vec<(usize, LineKind, usize, usize)> = map
            .runs()
            .iter()
            .map(|r| (r.before_turn, r.kind, r.first_line, r.texts.len()))
            .collect();
        assert_eq!(
            runs,
            [
                (0, LineKind::Metadata, 1, 3),
                (0, LineKind::Heading, 4, 1),
                (1, LineKind::Direction, 8, 1),
            ]
        );
    }
}
