//! Recognising speaker labels and headings in a line, shared by detection and the parsers.
//!
//! The hard part of `Name: text` is telling a label from a sentence with a colon in it ("He
//! said this: it was fine"). The rule: a label is short (at most 5 words, 40 characters), has no
//! sentence punctuation, is followed by whitespace (so `10:30` and `https://` are not labels),
//! and each word starts with a capital or a character without case (digits, emoji, Arabic,
//! Hebrew, CJK), apart from name particles such as "van" or "de". Names the cast header lists are
//! always labels, and so is an all-lower-case label used at least three times in the script
//! (chat logs: `alice: hi`).
//!
//! One module per thing recognised: [`colon`] (`Name: text` and its kin), [`play_names`] (the
//! play layouts' names), [`headings`] (structure that is never spoken), [`timestamps`]
//! (transcripts), [`subtitles`] (SRT and VTT cues) and [`cue_labels`] (audio-drama cues
//! written as labels). The parsers import from here; the modules see each other through these
//! re-exports.

mod colon;
mod cue_labels;
mod headings;
mod play_names;
mod subtitles;
mod timestamps;

pub(crate) use colon::*;
pub(crate) use cue_labels::*;
pub(crate) use headings::*;
pub(crate) use play_names::*;
pub(crate) use subtitles::*;
pub(crate) use timestamps::*;

#[cfg(test)]
mod tests;
