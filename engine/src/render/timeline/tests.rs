//! The walk on hand-made plans: what comes out, in what order, and where it lands.

use super::*;
use crate::render::PlannedWord;
use crate::script::Position;

fn sentence(caption: &str) -> Step {
    Step::Speak(SentencePlan {
        caption: caption.to_owned(),
        phonemes: "ə".to_owned(),
        speed: 1.0,
        words: Vec::new(),
        sounds: Vec::new(),
    })
}

fn line(index: usize, speaker: &str, steps: Vec<Step>) -> LinePlan {
    LinePlan {
        index,
        speaker: speaker.to_owned(),
        voice: "af_heart".to_owned(),
        steps,
        position: Position {
            line: index + 1,
            column: 1,
        },
        lead_pause: None,
        cut_off: false,
        barges_in: false,
    }
}

/// 0.1 s of padding, `tone` s of sound, 0.1 s of padding: the audible part is the tone plus
/// the trimming margins.
fn rendered(tone: f32) -> Vec<f32> {
    let pad = samples(0.1);
    let mut v = vec![0.0; pad];
    v.extend(std::iter::repeat_n(0.5, samples(tone)));
    v.extend(std::iter::repeat_n(0.0, pad));
    v
}

/// Walks `plans`, rendering every sentence as `rendered(0.5)`; returns the placements in words
/// and the total samples written.
fn walk(plans: &[LinePlan], from: usize) -> (Vec<String>, u64, Vec<Cue>, Vec<LineMark>) {
    let mut tl = Timeline::new(plans, from, None);
    let (mut log, mut written, mut cues, mut marks) = (Vec::new(), 0u64, Vec::new(), Vec::new());
    while let Some(p) = tl.next() {
        match p {
            Placement::Silence(n) => {
                written += n as u64;
                log.push(format!("silence {n}"));
            }
            Placement::LineStart { plan, at } => {
                assert_eq!(at, written, "a line starts where the audio so far ends");
                log.push(format!("start {}", plan.index));
            }
            Placement::Sentence(slot) => {
                let audio = rendered(0.5);
                let placed = tl.place(&slot, &audio, &[]);
                assert_eq!(placed.at, written);
                written += placed.keep.len() as u64;
                log.push(format!("say {}", slot.sentence.caption));
                cues.push(placed.cue);
            }
            Placement::LineEnd(mark) => {
                log.push(format!("end {}", mark.line));
                marks.push(mark);
            }
        }
        assert_eq!(tl.position(), written, "the walk counts what was written");
    }
    (log, written, cues, marks)
}

#[test]
fn lines_sentences_gaps_and_the_tail_come_in_order() {
    let mut second = line(
        1,
        "Bo",
        vec![sentence("Yes."), Step::Silence(1.0), sentence("No.")],
    );
    second.lead_pause = None;
    let plans = vec![
        line(0, "Al", vec![sentence("Hi."), sentence("How are you?")]),
        second,
    ];
    let (log, written, cues, marks) = walk(&plans, 0);
    let gap = samples(timing::sentence_gap(1.0));
    let turn = samples(timing::turn_gap(&plans[0], &plans[1], None));
    assert_eq!(
        log,
        vec![
            "start 0".to_owned(),
            "say Hi.".to_owned(),
            format!("silence {gap}"),
            "say How are you?".to_owned(),
            "end 0".to_owned(),
            format!("silence {turn}"),
            "start 1".to_owned(),
            "say Yes.".to_owned(),
            format!("silence {}", samples(1.0)),
            "say No.".to_owned(),
            "end 1".to_owned(),
            format!("silence {}", samples(TAIL_SECS)),
        ]
    );
    let kept = timing::audible_range(&rendered(0.5), SAMPLE_RATE, false).len() as u64;
    let expected = 4 * kept + gap as u64 + turn as u64 + samples(1.0) as u64;
    assert_eq!(written, expected + samples(TAIL_SECS) as u64);
    // Cues sit inside their lines, in order, without overlap.
    assert_eq!(cues.len(), 4);
    for pair in cues.windows(2) {
        assert!(pair[0].end <= pair[1].start, "{pair:?}");
    }
    assert!(cues[0].start >= marks[0].start && cues[1].end <= marks[0].end);
    assert!(cues[2].start >= marks[1].start && cues[3].end <= marks[1].end);
    assert_eq!(marks[1].source_line, 2);
}

#[test]
fn a_walk_from_a_later_line_starts_with_its_lead_pause_only() {
    let mut later = line(2, "Cy", vec![sentence("Later.")]);
    later.lead_pause = Some(0.75);
    let plans = vec![
        line(0, "Al", vec![sentence("One.")]),
        line(1, "Bo", vec![]),
        later,
    ];
    let (log, ..) = walk(&plans, 1);
    assert_eq!(log[0], format!("silence {}", samples(0.75)));
    assert_eq!(log[1], "start 2");
    // Silent lines are not walked at all.
    assert!(!log.iter().any(|l| l == "start 1"));
}

#[test]
fn a_cut_off_line_stops_dead_at_its_last_sentence() {
    let mut cut = line(0, "Al", vec![sentence("I think"), sentence("that—")]);
    cut.cut_off = true;
    let plans = vec![cut, line(1, "Bo", vec![sentence("Sorry.")])];
    let mut tl = Timeline::new(&plans, 0, None);
    let mut cut_offs = Vec::new();
    while let Some(p) = tl.next() {
        if let Placement::Sentence(slot) = p {
            cut_offs.push(slot.cut_off);
            tl.place(&slot, &rendered(0.2), &[]);
        }
    }
    assert_eq!(cut_offs, [false, true, false]);
}

#[test]
fn nothing_audible_still_ends_with_the_tail() {
    let plans = vec![line(0, "Al", vec![])];
    let (log, written, ..) = walk(&plans, 0);
    assert_eq!(log, [format!("silence {}", samples(TAIL_SECS))]);
    assert_eq!(written, samples(TAIL_SECS) as u64);
}

#[test]
fn words_land_in_the_file_inside_their_cue_and_their_line() {
    // "ab cd": two words; one pass of pad, a, b, space, c, d, pad.
    let plan = |index: usize| {
        let mut l = line(
            index,
            "Ann",
            vec![Step::Speak(SentencePlan {
                caption: "ab cd".to_owned(),
                phonemes: "ab cd".to_owned(),
                speed: 1.0,
                words: vec![
                    PlannedWord {
                        text: "ab".to_owned(),
                        phonemes: 0..2,
                        at: Position::new(index + 1, 6),
                    },
                    PlannedWord {
                        text: "cd".to_owned(),
                        phonemes: 3..5,
                        at: Position::new(index + 1, 9),
                    },
                ],
                sounds: Vec::new(),
            })],
        );
        l.lead_pause = Some(0.5);
        l
    };
    let plans = [plan(0), plan(1)];
    // 8 pad frames (0.2 s), 4 frames a symbol, 8 pad frames: sound from the first symbol.
    let durations: Vec<Arc<[u32]>> = vec![Arc::from(vec![8u32, 4, 4, 4, 4, 4, 8])];
    let total = 36 * 600;
    let mut audio = vec![0.0f32; total];
    for x in &mut audio[8 * 600..28 * 600] {
        *x = 0.5;
    }
    let mut tl = Timeline::new(&plans, 0, Some(0.3));
    let mut cues = Vec::new();
    let mut marks = Vec::new();
    while let Some(p) = tl.next() {
        match p {
            Placement::Sentence(slot) => cues.push(tl.place(&slot, &audio, &durations).cue),
            Placement::LineEnd(mark) => marks.push(mark),
            _ => {}
        }
    }
    assert_eq!(cues.len(), 2);
    for (cue, mark) in cues.iter().zip(&marks) {
        let w = &cue.words;
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].word.as_str(), w[1].word.as_str()), ("ab", "cd"));
        assert_eq!(
            (w[1].source_line, w[1].source_column),
            (mark.source_line, 9)
        );
        assert!(cue.start <= w[0].start && w[0].start < w[0].end);
        assert!(
            w[0].end <= w[1].start && w[1].end <= cue.end,
            "{w:?} in {cue:?}"
        );
        assert_eq!(&mark.words, w, "a line's words are its sentences' words");
    }
    // The second line sits 0.3 s (its gap) after the first ends: so do its words.
    let shift = cues[1].start - cues[0].start;
    assert!((cues[1].words[1].start - cues[0].words[1].start - shift).abs() < 1e-9);
    // "cd" starts half a space (2 frames) before its first symbol, three frames early:
    // in the untrimmed audio 8 + 4 + 4 + 2 - 3 = 15 frames; the trim keeps 20 ms before 8.
    let expect = cues[0].start - 0.02 + 0.02 + (15.0 - 8.0) * 0.025;
    assert!(
        (cues[0].words[1].start - expect).abs() < 1e-3,
        "{:?}",
        cues[0].words
    );
}

#[test]
fn a_sentence_with_little_or_nothing_audible_is_placed_with_its_words() {
    let plans = [line(
        0,
        "Ann",
        vec![Step::Speak(SentencePlan {
            caption: "ab".to_owned(),
            phonemes: "ab".to_owned(),
            speed: 1.0,
            words: vec![PlannedWord {
                text: "ab".to_owned(),
                phonemes: 0..2,
                at: Position::new(1, 6),
            }],
            sounds: Vec::new(),
        })],
    )];
    let durations: Vec<Arc<[u32]>> = vec![Arc::from(vec![8u32, 4, 4, 8])];
    // Silence, a click of a few samples, and a 10 ms blip: each shorter than the lead margin.
    let mut click = vec![0.0f32; 24 * 600];
    click[12 * 600..12 * 600 + 3].fill(0.5);
    let mut blip = vec![0.0f32; 24 * 600];
    blip[12 * 600..12 * 600 + 240].fill(0.5);
    for audio in [vec![0.0f32; 24 * 600], click, blip] {
        let mut tl = Timeline::new(&plans, 0, None);
        while let Some(p) = tl.next() {
            if let Placement::Sentence(slot) = p {
                let placed = tl.place(&slot, &audio, &durations);
                let cue = &placed.cue;
                assert!(cue.start <= cue.end, "{cue:?}");
                for w in &cue.words {
                    assert!(cue.start <= w.start && w.start <= w.end && w.end <= cue.end);
                }
            }
        }
    }
}

fn cue(file: &str, alone: bool) -> crate::script::SoundCue {
    crate::script::SoundCue {
        action: crate::script::CueAction::Sound {
            file: file.to_owned(),
            volume_db: 0.0,
            fade_secs: 0.01,
            overlap_secs: 0.0,
        },
        position: Position::new(1, 1),
        alone,
    }
}

#[test]
fn speech_waits_for_a_sound_alone_on_its_line_and_a_cue_among_words_plays_at_its_word() {
    use crate::render::{InlineSound, SoundStep};
    let said = Step::Speak(SentencePlan {
        caption: "ab cd".to_owned(),
        phonemes: "ab cd".to_owned(),
        speed: 1.0,
        words: vec![
            PlannedWord {
                text: "ab".to_owned(),
                phonemes: 0..2,
                at: Position::new(2, 6),
            },
            PlannedWord {
                text: "cd".to_owned(),
                phonemes: 3..5,
                at: Position::new(2, 9),
            },
        ],
        sounds: vec![InlineSound {
            word: 1,
            cue: cue("click.wav", false),
        }],
    });
    let waits = |wait: Option<f32>, alone: bool| {
        Step::Sound(SoundStep {
            cue: cue("sting.wav", alone),
            wait,
        })
    };
    let plans = [line(
        0,
        "Ann",
        vec![waits(Some(1.5), true), said, waits(Some(9.0), false)],
    )];
    let durations: Vec<Arc<[u32]>> = vec![Arc::from(vec![8u32, 4, 4, 4, 4, 4, 8])];
    let mut audio = vec![0.0f32; 36 * 600];
    audio[8 * 600..28 * 600].fill(0.5);
    let mut tl = Timeline::new(&plans, 0, None);
    let mut placed = Vec::new();
    let mut cues = Vec::new();
    while let Some(p) = tl.next() {
        match p {
            Placement::Silence(n) => placed.push(n),
            Placement::Sentence(slot) => cues.push(tl.place(&slot, &audio, &durations)),
            _ => {}
        }
    }
    let sounds = tl.take_sounds();
    // The sting at 0, then 1.5 s of waiting, then the sentence.
    assert_eq!(placed[0], samples(1.5));
    assert_eq!(cues[0].at, samples(1.5) as u64);
    assert_eq!(sounds[0].at, 0);
    // The click at "cd", to the sample of its timed start.
    let cd = cues[0].cue.words[1].start;
    assert_eq!(sounds[1].at, (cd * f64::from(SAMPLE_RATE)).round() as u64);
    // A cue after the last word plays there and nothing waits for it, whatever its wait.
    let end = cues[0].at + cues[0].keep.len() as u64;
    assert_eq!(sounds[2].at, end);
    assert_eq!(placed[1..], [samples(TAIL_SECS)]);
    assert!(tl.take_sounds().is_empty(), "taken once");
}
