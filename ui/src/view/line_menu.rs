//! A line's context menu (right-click in the lines view): re-render it at another speed, or with
//! another voice for its speaker.
//!
//! Speed is per line in the script itself: the menu writes a `[rate:X]` directive at the start
//! of the turn (replacing one already there), so export and playback agree and the edit shows in
//! the raw text. Scripts give voices per speaker, not per line, so "with voice" changes the
//! speaker's voice in the cast, and the menu says that it applies to all of the speaker's lines.
//! Either way the change is an ordinary edit: undoable, and while playing only the changed lines
//! are rendered again.

use eframe::egui;

use crate::app::Studio;
use crate::doc::CastChoice;

/// The speeds the menu offers.
pub const SPEEDS: [f32; 6] = [0.8, 0.9, 1.0, 1.1, 1.25, 1.5];

pub fn show(studio: &mut Studio, ui: &mut egui::Ui, line: usize, speaker: &str) {
    ui.menu_button("Re-render with speed…", |ui| {
        let current = line_rate(studio, line);
        for speed in SPEEDS {
            let label = if (speed - 1.0).abs() < f32::EPSILON {
                "1.00× (no change)".to_owned()
            } else {
                format!("{speed:.2}×")
            };
            let chosen = current.is_some_and(|r| (r - speed).abs() < 1e-3)
                || (current.is_none() && (speed - 1.0).abs() < f32::EPSILON);
            if ui
                .selectable_label(chosen, label)
                .on_hover_text("Writes a [rate:…] directive at the start of this line")
                .clicked()
            {
                if let Err(e) = set_line_rate(studio, line, speed) {
                    studio.say(e);
                }
                ui.close();
            }
        }
    })
    .response
    .on_hover_text("Speak this line faster or slower");
    ui.menu_button(
        format!("Re-render with voice… (all of {speaker}'s lines)"),
        |ui| {
            let current = studio
                .doc
                .speakers()
                .into_iter()
                .find(|(s, _)| s == speaker)
                .map(|(_, c)| c);
            egui::ScrollArea::vertical()
                .max_height(320.0)
                .show(ui, |ui| {
                    for v in crate::view::cast::voices(studio) {
                        let chosen = current.as_ref().is_some_and(|c| c.voice == v.name);
                        if ui
                            .selectable_label(chosen, format!("{} ({})", v.name, v.gender))
                            .clicked()
                        {
                            let speed = current.as_ref().map_or(1.0, |c| c.speed);
                            crate::view::cast::set_choice(
                                studio,
                                speaker,
                                CastChoice {
                                    voice: v.name.clone(),
                                    speed,
                                },
                            );
                            ui.close();
                        }
                    }
                });
        },
    )
    .response
    .on_hover_text(format!(
        "Scripts give each speaker one voice: this changes {speaker}'s voice in the cast"
    ));
}

/// The `[rate:…]` the turn starts with, if any.
fn line_rate(studio: &Studio, line: usize) -> Option<f32> {
    let source = crate::view::editor::line_source(studio, line)?;
    let (_, rest) = split_label(&source)?;
    leading_rate(rest).map(|(rate, _)| rate)
}

/// `("Speaker:", rest)` for a `Speaker: text` turn.
fn split_label(source: &str) -> Option<(&str, &str)> {
    let colon = source.find(':')?;
    let (label, rest) = source.split_at(colon + 1);
    (!label.contains('[') && !label.trim_start().starts_with('{')).then_some((label, rest))
}

/// A `[rate:X]` or `[speed:X]` directive at the start of `rest`: its rate and what follows it.
fn leading_rate(rest: &str) -> Option<(f32, &str)> {
    let t = rest.trim_start();
    let inner_end = t.find(']')?;
    let inner = t.strip_prefix('[')?.get(..inner_end - 1)?;
    let (key, value) = inner.split_once(':')?;
    if !matches!(key.trim(), "rate" | "speed") {
        return None;
    }
    let rate = value.trim().trim_end_matches(['x', '×']).parse().ok()?;
    Some((rate, &t[inner_end + 1..]))
}

/// Rewrites turn `line` to start with `[rate:speed]` (none for 1.0), replacing any already there.
pub fn set_line_rate(studio: &mut Studio, line: usize, speed: f32) -> Result<(), String> {
    let source = crate::view::editor::line_source(studio, line)
        .ok_or_else(|| format!("line {} is not in the script", line + 1))?;
    let Some((label, rest)) = split_label(&source) else {
        return Err(
            "per-line speed can be set from this menu only in `Speaker: text` scripts; \
             add a [rate:1.2] directive to the line by hand"
                .to_owned(),
        );
    };
    let text = leading_rate(rest)
        .map_or(rest, |(_, after)| after)
        .trim_start();
    let new = if (speed - 1.0).abs() < f32::EPSILON {
        format!("{label} {text}")
    } else {
        format!("{label} [rate:{speed}] {text}")
    };
    crate::view::editor::edit_line(studio, line, &new);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_strips_a_leading_rate() {
        assert_eq!(leading_rate(" [rate:1.2] Hello"), Some((1.2, " Hello")));
        assert_eq!(leading_rate("[speed:0.8x] Hi"), Some((0.8, " Hi")));
        assert_eq!(leading_rate(" Hello [rate:1.2]"), None);
        assert_eq!(leading_rate(" [pause:1s] Hello"), None);
        assert_eq!(split_label("Ann: Hi"), Some(("Ann:", " Hi")));
    }
}
