//! The timeline's sound lane, under the speech: the envelope of the beds and sounds as they are
//! heard (ducked under the voices, faded), and each cue as a band from where it starts to where
//! it falls silent, labelled with its file where the label fits. Sounds run along the top half,
//! beds along the bottom half, so a sting over a bed never hides it. Hovering a cue says what it
//! is, where the script writes it and its options.
//!
//! Why drawn from the playback's own report ([`crate::waveform::SoundLane`]): the lane shows
//! what was mixed, at the samples it was mixed at, so it cannot disagree with what is heard.

use eframe::egui::{self, Color32, Pos2, Rect, Stroke, Vec2};
use engine::script::CueAction;

use crate::waveform::{LaneCue, SoundLane};

/// Sounds' colour (bands and labels).
pub const SOUND_COLOUR: Color32 = Color32::from_rgb(0xe0, 0x8a, 0x2c);
/// Beds' colour.
pub const BED_COLOUR: Color32 = Color32::from_rgb(0x3a, 0xa6, 0x9a);

/// Draws an envelope's peaks across a rect in a colour, to the timeline's scale and zoom.
pub type DrawEnvelope<'a> = dyn Fn(&egui::Painter, Rect, &[(f32, f32)], Color32) + 'a;

/// The lane's height in a timeline `height` tall (none without cues).
#[must_use]
pub fn height(lane: &SoundLane, height: f32) -> f32 {
    if lane.is_empty() {
        0.0
    } else {
        (height * 0.3).clamp(24.0, 48.0)
    }
}

/// Draws `lane` in `rect`; `x_of` places a sample and `envelope` draws the lane's envelope as the
/// speech's is drawn (to one scale).
pub fn draw(
    painter: &egui::Painter,
    rect: Rect,
    lane: &SoundLane,
    x_of: &dyn Fn(usize) -> f32,
    envelope: &DrawEnvelope<'_>,
    visuals: &egui::Visuals,
) {
    painter.line_segment(
        [rect.left_top(), rect.right_top()],
        Stroke::new(1.0, visuals.weak_text_color().gamma_multiply(0.5)),
    );
    envelope(
        painter,
        rect,
        &lane.envelope.peaks,
        visuals.text_color().gamma_multiply(0.45),
    );
    let half = rect.height() / 2.0;
    let font = egui::FontId::proportional(11.0);
    let mut free_from = [f32::NEG_INFINITY; 2];
    for cue in &lane.cues {
        let (row, colour) = if cue.is_bed() {
            (1, BED_COLOUR)
        } else {
            (0, SOUND_COLOUR)
        };
        let top = rect.top() + half * row as f32;
        let end = cue.end.unwrap_or(cue.start);
        let band = Rect::from_min_max(
            Pos2::new(x_of(cue.start), top + 1.0),
            Pos2::new(x_of(end).max(x_of(cue.start) + 2.0), top + half - 1.0),
        );
        if band.right() < rect.left() || band.left() > rect.right() {
            continue;
        }
        painter.rect_filled(band, 2.0, colour.gamma_multiply(0.3));
        painter.line_segment(
            [band.left_top(), band.left_bottom()],
            Stroke::new(1.5, colour),
        );
        let at = Pos2::new(band.left().max(rect.left()) + 3.0, band.center().y);
        let label = painter.layout_no_wrap(cue.label(), font.clone(), colour);
        let label_end = at.x + label.size().x;
        if at.x >= free_from[row] && label_end <= band.right().max(at.x + 40.0).min(rect.right()) {
            painter.galley(at - Vec2::new(0.0, label.size().y / 2.0), label, colour);
            free_from[row] = label_end + 4.0;
        }
    }
}

/// The cue under `pos` in a lane drawn in `rect`, if one is (sounds over beds).
#[must_use]
pub fn cue_at<'l>(
    rect: Rect,
    lane: &'l SoundLane,
    x_of: &dyn Fn(usize) -> f32,
    pos: Pos2,
) -> Option<&'l LaneCue> {
    if !rect.contains(pos) {
        return None;
    }
    let bed_row = pos.y >= rect.center().y;
    lane.cues.iter().rev().find(|c| {
        let end = c.end.unwrap_or(c.start);
        c.is_bed() == bed_row
            && x_of(c.start) <= pos.x
            && pos.x <= x_of(end).max(x_of(c.start) + 2.0)
    })
}

/// What hovering a cue says: the cue, where the script writes it, and its options.
#[must_use]
pub fn describe(cue: &LaneCue) -> String {
    let place = format!(
        "line {}, column {}",
        cue.cue.position.line, cue.cue.position.column
    );
    match &cue.cue.action {
        CueAction::Sound {
            file,
            volume_db,
            fade_secs,
            overlap_secs,
        } => format!(
            "[sound: {file}] at {place}: volume {volume_db:+} dB, fade {fade_secs} s, overlap \
             {overlap_secs} s"
        ),
        CueAction::Bed {
            file,
            volume_db,
            fade_secs,
            duck_db,
        } => format!(
            "[bed: {file}] at {place}: volume {volume_db:+} dB, fade {fade_secs} s, ducks \
             {duck_db} dB under speech"
        ),
        CueAction::BedOff { fade_secs } => format!("[bed: off] at {place}: fade {fade_secs} s"),
    }
}

#[cfg(test)]
mod tests;
