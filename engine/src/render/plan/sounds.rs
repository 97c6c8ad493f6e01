//! Where a line's sound cues go in its plan: why apart from the planning of words, because a cue
//! written among the words must not cut the sentence around it (Kokoro would hear two
//! sentences and the prosody would break), so it rides on the sentence instead, at the word it
//! was written before.

use crate::script::SoundCue;

use super::{InlineSound, SoundStep, Step};

/// Gives each cue in `inline` to the first sentence of `steps[from..]` holding a word written
/// after it (word positions are the script's, so this is the word that follows the cue on the
/// page); a cue with no word after it in the stretch becomes a step after it: it plays where
/// the speech ends, and the speech does not wait.
pub(super) fn attach_inline(steps: &mut Vec<Step>, from: usize, inline: &mut Vec<SoundCue>) {
    if inline.is_empty() {
        return;
    }
    for step in &mut steps[from..] {
        let Step::Speak(sentence) = step else {
            continue;
        };
        inline.retain(|cue| {
            let Some(word) = sentence.words.iter().position(|w| w.at > cue.position) else {
                return true;
            };
            sentence.sounds.push(InlineSound {
                word,
                cue: cue.clone(),
            });
            false
        });
    }
    steps.extend(
        inline
            .drain(..)
            .map(|cue| Step::Sound(SoundStep { cue, wait: None })),
    );
}
