//! Cutting a context's audio into messages whose alignment covers exactly their audio.
//!
//! ElevenLabs' clients add up the alignment of each message (the last character's start plus
//! its duration) to know where the next message's audio starts (pipecat's word timestamps do
//! this), so a message whose characters end before its audio does, or one with audio and no
//! characters, makes every later word early. Each message therefore ends where a character
//! starts: audio after the last character start in hand is held back for the next message
//! (at most one character's worth, a few tens of ms), and a segment's last message takes
//! everything, its last character stretched to the end of its audio. Held audio is also sent
//! once it passes [`MAX_HOLD`] (a long silence inside one character).

use std::collections::VecDeque;

use engine::follow::CharTime;
use engine::SAMPLE_RATE;

use super::protocol::Alignment;

/// Audio held back at most (samples at 24 kHz): a second and a half, longer than any pause
/// inside one character.
const MAX_HOLD: usize = SAMPLE_RATE as usize * 3 / 2;

/// A message's worth: audio and the characters that start in it.
#[derive(Debug, Default, PartialEq)]
pub struct Piece {
    pub samples: Vec<f32>,
    pub alignment: Option<Alignment>,
}

/// Silence kept before the first word of a context's speech (samples): 30 ms.
const LEAD: u64 = SAMPLE_RATE as u64 * 3 / 100;

#[derive(Debug)]
pub struct Aligner {
    pending: Vec<f32>,
    /// Stream sample at which `pending` starts.
    start: u64,
    chars: VecDeque<CharTime>,
    /// Nothing sent yet: the model's silence before the first word is dropped (the listener
    /// is waiting; every later pause is kept).
    trim_lead: bool,
    /// No alignment sent yet.
    first_message: bool,
    /// The last character sent.
    last_char: Option<char>,
}

impl Default for Aligner {
    fn default() -> Self {
        Self {
            pending: Vec::new(),
            start: 0,
            chars: VecDeque::new(),
            trim_lead: true,
            first_message: true,
            last_char: None,
        }
    }
}

impl Aligner {
    /// Takes a chunk (and, on a segment's first chunk, its characters); returns a message when
    /// one is ready.
    pub fn chunk(
        &mut self,
        samples: &[f32],
        chars: Vec<CharTime>,
        segment_end: bool,
    ) -> Option<Piece> {
        self.pending.extend_from_slice(samples);
        self.chars.extend(chars);
        let end = self.start + self.pending.len() as u64;
        // A text that starts with a space (the protocol's `" "` first message) has a character
        // covering the silence, which lets the first window go at once, silence and all: the
        // listener's wait is the model's first window, not the second. Otherwise the silence
        // is dropped (it would be held back anyway, having no character to carry it).
        let covered = self.chars.front().is_some_and(|c| c.ch.is_whitespace());
        if self.trim_lead && covered {
            self.trim_lead = false;
        }
        if self.trim_lead {
            if let Some(first) = self.chars.iter().find(|c| !c.ch.is_whitespace()) {
                let keep = first.start.saturating_sub(LEAD).min(end);
                if keep > self.start {
                    self.pending.drain(..(keep - self.start) as usize);
                    self.start = keep;
                }
                self.trim_lead = keep >= end && !segment_end;
            }
        }
        if segment_end {
            return Some(self.emit(end, true));
        }
        if self.pending.is_empty() {
            return None;
        }
        let cut = self
            .chars
            .iter()
            .rev()
            .map(|c| c.start)
            .find(|&s| s > self.start && s < end);
        // A character already under way when this audio starts (the space or punctuation
        // before a word, covering its silence) lets it all go now, clipped at its end.
        let under_way = self.chars.front().is_some_and(|c| c.start <= self.start);
        match cut {
            Some(cut) => Some(self.emit(cut, false)),
            None if under_way || self.pending.len() > MAX_HOLD => Some(self.emit(end, false)),
            None => None,
        }
    }

    /// Whatever is held, at the end of the stream.
    ///
    /// The text's last word is followed by a space of no duration when it has none: clients
    /// that find words by the spaces between them (pipecat) end the last word only there.
    pub fn finish(&mut self) -> Option<Piece> {
        let end = self.start + self.pending.len() as u64;
        let mut piece =
            (!self.pending.is_empty() || !self.chars.is_empty()).then(|| self.emit(end, true));
        if self.last_char.is_some_and(|c| !c.is_whitespace()) {
            let piece = piece.get_or_insert_with(Piece::default);
            let a = piece.alignment.get_or_insert_with(Alignment::default);
            let at = a
                .starts_ms
                .last()
                .zip(a.durations_ms.last())
                .map_or(0, |(s, d)| s + d);
            a.chars.push(' ');
            a.starts_ms.push(at);
            a.durations_ms.push(0);
            self.last_char = Some(' ');
        }
        piece
    }

    /// Sends the audio up to stream sample `cut` with the characters that start before it,
    /// the last one's end clipped to `cut` (the client's running sum of message lengths stays
    /// exact; the next message starts inside that character, relative to its own audio);
    /// `last`: the final message of a segment, whose last character ends at `cut`.
    fn emit(&mut self, cut: u64, last: bool) -> Piece {
        let n = (cut - self.start) as usize;
        let rest = self.pending.split_off(n.min(self.pending.len()));
        let samples = std::mem::replace(&mut self.pending, rest);
        let take = self
            .chars
            .iter()
            .take_while(|c| c.start < cut || last)
            .count();
        let mut chars: Vec<CharTime> = self.chars.drain(..take).collect();
        if self.first_message && !chars.is_empty() {
            // A context's first alignment: clients strip its leading spaces (pipecat does), and
            // with them the silence they cover, which would put every later word early. The
            // first letter takes their place and starts with the audio (the one word dated a
            // little early, by the model's lead-in).
            let lead = chars.iter().take_while(|c| c.ch.is_whitespace()).count();
            if lead > 0 {
                let from = chars[0].start;
                chars.drain(..lead);
                if chars.is_empty() {
                    if let Some(next) = self.chars.pop_front() {
                        chars.push(next);
                    }
                }
                if let Some(first) = chars.first_mut() {
                    first.start = from;
                }
            }
            self.first_message = chars.is_empty();
        }
        if let Some(c) = chars.last() {
            self.last_char = Some(c.ch);
        }
        // Milliseconds from the stream's start, rounded, minus the message's start so rounded:
        // the messages' lengths add up to the stream's, however many there are.
        let abs_ms = |at: u64| (at * 1000 + u64::from(SAMPLE_RATE) / 2) / u64::from(SAMPLE_RATE);
        let origin = abs_ms(self.start);
        let ms = |at: u64| abs_ms(at.clamp(self.start, cut)) - origin;
        let alignment = (!chars.is_empty()).then(|| {
            let mut a = Alignment::default();
            for (i, c) in chars.iter().enumerate() {
                let start = ms(c.start);
                let end = if i + 1 == chars.len() && (last || c.end > cut) {
                    ms(cut)
                } else {
                    ms(c.end)
                };
                a.chars.push(c.ch);
                a.starts_ms.push(start);
                a.durations_ms.push(end.saturating_sub(start));
            }
            a
        });
        self.start = cut;
        Piece { samples, alignment }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(ch: char, start: u64, end: u64) -> CharTime {
        CharTime { ch, start, end }
    }

    /// Messages end where a character starts; held audio goes with the next; each message's
    /// alignment ends exactly at its audio's end (to the ms), so clients that add them up
    /// stay in step; every character is sent once, in order.
    #[test]
    fn messages_end_at_character_starts() {
        let mut a = Aligner::default();
        // A segment of 0.6 s: "Hi" at 0.1–0.3 s, " " to 0.35, "yo" 0.35–0.6.
        let chars = vec![
            ch('H', 2400, 4800),
            ch('i', 4800, 7200),
            ch(' ', 7200, 8400),
            ch('y', 8400, 12_000),
            ch('o', 12_000, 14_400),
        ];
        // First chunk: 0.25 s. The silence before "H" but 30 ms is dropped; the last start
        // inside the chunk is 'i' (0.2 s): the message ends there.
        let first = a.chunk(&vec![0.0; 6000], chars, false).expect("a message");
        assert_eq!(first.samples.len(), 4800 - 1680);
        let al = first.alignment.expect("alignment");
        assert_eq!(al.chars, ['H']);
        assert_eq!(
            (al.starts_ms[0], al.starts_ms[0] + al.durations_ms[0]),
            (30, 130)
        );
        // Second chunk ends the segment: everything else, the last character to the end.
        let second = a
            .chunk(&vec![0.0; 8400], Vec::new(), true)
            .expect("a message");
        assert_eq!(second.samples.len(), 1200 + 8400);
        let al = second.alignment.expect("alignment");
        assert_eq!(al.chars, ['i', ' ', 'y', 'o']);
        assert_eq!(al.starts_ms[0], 0);
        let last = al.chars.len() - 1;
        assert_eq!(
            al.starts_ms[last] + al.durations_ms[last],
            400,
            "to the end of its audio"
        );
        // The end of the text: a space of no duration closes the last word.
        let end = a.finish().expect("the closing space");
        assert!(end.samples.is_empty());
        let al = end.alignment.expect("alignment");
        assert_eq!((al.chars, al.durations_ms), (vec![' '], vec![0]));
        assert!(a.finish().is_none());
        // A later segment whose text starts with a space: its first chunk goes at once, the
        // space clipped at the chunk's end; the next message starts inside it.
        let third = a
            .chunk(
                &vec![0.0; 2400],
                vec![ch(' ', 14_400, 19_200), ch('x', 19_200, 24_000)],
                false,
            )
            .expect("at once");
        let al = third.alignment.expect("alignment");
        assert_eq!(
            (al.chars.clone(), al.starts_ms[0], al.durations_ms[0]),
            (vec![' '], 0, 100)
        );
    }

    #[test]
    fn a_chunk_without_a_character_start_is_held_then_sent_past_the_limit() {
        let mut a = Aligner {
            trim_lead: false,
            ..Aligner::default()
        };
        // 'a' is under way from the start: the chunk goes at once, 'a' clipped to it.
        let chars = vec![ch('a', 0, 60_000), ch('b', 60_000, 61_000)];
        let first = a.chunk(&vec![0.0; 1000], chars, false).expect("sent");
        assert_eq!(first.alignment.map(|x| x.chars), Some(vec!['a']));
        // The rest of 'a': no character starts in it; held until the limit.
        assert!(a.chunk(&vec![0.0; 1000], Vec::new(), false).is_none());
        let sent = a
            .chunk(&vec![0.0; MAX_HOLD], Vec::new(), false)
            .expect("sent");
        assert_eq!(sent.samples.len(), MAX_HOLD + 1000);
        assert!(sent.alignment.is_none());
    }

    /// Message lengths in whole ms add up to the stream's length however the audio is cut.
    #[test]
    fn rounding_does_not_drift() {
        let mut a = Aligner {
            trim_lead: false,
            ..Aligner::default()
        };
        let mut total = 0;
        let mut at = 0u64;
        for k in 0..200u64 {
            let n = 1000 + (k * 37) % 500; // 41.7–62.4 ms, never whole ms
            let chars = vec![ch('x', at, at + n)];
            let piece = a
                .chunk(&vec![0.0; n as usize], chars, true)
                .expect("segment end");
            let al = piece.alignment.expect("alignment");
            total += al.starts_ms[0] + al.durations_ms[0];
            at += n;
        }
        assert_eq!(total, (at * 1000 + 12_000) / 24_000);
    }
}
