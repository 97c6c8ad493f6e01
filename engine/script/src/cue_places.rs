//! Where a sound cue lands in the episode: alone on its line or among a turn's words, and the
//! cues written between turns, which lead the next turn (or close the last one).
//!
//! Why apart from [`super::cues`]: that module reads what a bracket says; this one decides where
//! it acts, with the layouts' drafts and the turn scanner, so neither the draft nor the scanner
//! has to know a cue's syntax.

use super::cues::{parse_cue, SoundCue};
use super::draft::{Draft, Mark, Placed};
use super::error::{ScriptError, ScriptErrorKind};
use super::model::{Piece, Position};
use super::source::TextSpan;

impl<'a> Draft<'a> {
    /// A sound cue alone on its line (`[sound: sting.wav]`, its bracket at `segment`): inside
    /// the open turn when `in_turn` (speech waits for it there), else before the next turn.
    pub fn sound_line(&mut self, segment: TextSpan<'a>, in_turn: bool) {
        if in_turn && self.open {
            self.push(segment);
            return;
        }
        let text = segment.text.trim();
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        let at = segment.position;
        self.sound_mark(inner, at, Some(Position::new(at.line, at.column + 1)));
    }

    /// A sound cue between turns: `inner` as a bracket's inside, reported at `position`.
    pub fn sound_mark(&mut self, inner: &str, position: Position, inner_at: Option<Position>) {
        self.marks.push(Placed {
            before: self.turns.len(),
            position,
            mark: Mark::Sound {
                inner: inner.to_owned(),
                inner_at,
            },
            lines: vec![position.line],
        });
    }
}

/// The cue a turn's bracket `chars[open..=close]` holds (`None` when it holds none): alone on
/// its line unless that line is the label's (`label_line`); an error points at the option.
pub(crate) fn cue_piece(
    file: &str,
    chars: &[char],
    open: usize,
    close: usize,
    label_line: usize,
    pos_of: &dyn Fn(usize) -> Position,
) -> Option<Result<Piece, ScriptError>> {
    let inner: String = chars[open + 1..close].iter().collect();
    let parsed = parse_cue(&inner)?;
    Some(
        parsed
            .map_err(|e| {
                ScriptError::new(
                    file,
                    pos_of(open + 1 + e.offset),
                    ScriptErrorKind::BadCue {
                        cue: inner.trim().to_owned(),
                        reason: e.reason,
                    },
                )
            })
            .map(|action| {
                let position = pos_of(open);
                let alone = position.line != label_line && alone_on_its_line(chars, open, close);
                Piece::Sound {
                    cue: SoundCue {
                        action,
                        position,
                        alone,
                    },
                }
            }),
    )
}

/// Whether `chars[open..=close]` has nothing but blanks beside it up to the line breaks.
fn alone_on_its_line(chars: &[char], open: usize, close: usize) -> bool {
    let blank = |c: &&char| **c != '\n';
    chars[..open]
        .iter()
        .rev()
        .take_while(blank)
        .all(|c| c.is_whitespace())
        && chars[close + 1..]
            .iter()
            .take_while(blank)
            .all(|c| c.is_whitespace())
}

/// The cue a stand-alone sound mark holds (`None` for any other mark), with its line.
pub(crate) fn standalone_sound(
    file: &str,
    mark: &Placed,
) -> Result<Option<(Piece, usize)>, ScriptError> {
    let Mark::Sound { inner, inner_at } = &mark.mark else {
        return Ok(None);
    };
    let Some(parsed) = parse_cue(inner) else {
        return Ok(None);
    };
    let action = parsed.map_err(|e| {
        let at = inner_at.map_or(mark.position, |p| {
            Position::new(p.line, p.column + e.offset)
        });
        ScriptError::new(
            file,
            at,
            ScriptErrorKind::BadCue {
                cue: inner.trim().to_owned(),
                reason: e.reason,
            },
        )
    })?;
    let cue = SoundCue {
        action,
        position: mark.position,
        alone: true,
    };
    Ok(Some((Piece::Sound { cue }, mark.position.line)))
}
