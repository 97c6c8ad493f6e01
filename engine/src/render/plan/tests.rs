//! Planning: sentences, pauses, rates, pronunciations, words and their places, sound cues.

use super::*;
use crate::phonemes::Phonemizer;

#[test]
fn captions_restore_pronounced_and_respelled_words() {
    let mut run = Run::default();
    run.push_text("I love ");
    run.push_ipa("Kokoro", "kˈOkəɹO");
    run.push_text("  and ");
    run.push_respelled("Nguyen", "win");
    run.push_text(" a lot.");
    assert_eq!(
        caption_of(&run, 0..run.text.len()),
        "I love Kokoro and Nguyen a lot."
    );
}

fn plan(script: &str) -> Vec<LinePlan> {
    let e =
        Episode::parse("t.txt", script, &crate::script::ParseOptions::default()).expect("parse");
    plan_episode(&e).expect("plan")
}

fn speaks(p: &LinePlan) -> Vec<&SentencePlan> {
    p.steps
        .iter()
        .filter_map(|s| match s {
            Step::Speak(x) => Some(x),
            Step::Silence(_) | Step::Sound(_) => None,
        })
        .collect()
}

#[test]
fn lines_become_sentences_pauses_and_rates() {
    let p = plan(
        "# cast\nAnn: af_heart @1.1\n\nAnn: [pause:0.8s] Hello Dr. Smith. It costs $5 (sighs) today. [pause:1s] [rate:1.5] Bye [Kokoro](/kˈOkəɹO/)!\nBen: I think—\nAnn: —sorry.\n",
    );
    assert_eq!(p.len(), 3);
    let ann = &p[0];
    assert_eq!(ann.lead_pause, Some(0.8));
    let s = speaks(ann);
    let captions: Vec<&str> = s.iter().map(|x| x.caption.as_str()).collect();
    assert_eq!(
        captions,
        ["Hello Dr. Smith.", "It costs $5 today.", "Bye Kokoro!"]
    );
    assert!((s[0].speed - 1.1).abs() < 1e-6 && (s[2].speed - 1.5).abs() < 1e-6);
    assert!(matches!(ann.steps[2], Step::Silence(x) if (x - 1.0).abs() < 1e-6));
    // "$5" is read as words, and the IPA is spliced in as given.
    let plain = Phonemizer::global()
        .expect("espeak")
        .phonemize("It costs $5 today.", Language::EnUs)
        .expect("phonemize");
    assert_ne!(s[1].phonemes, plain);
    assert!(
        s[1].phonemes.contains("dˈɑːlɚz") || s[1].phonemes.contains("dˈɑlɚz"),
        "{}",
        s[1].phonemes
    );
    assert!(s[2].phonemes.contains("kˈOkəɹO"), "{}", s[2].phonemes);
    assert!(!s.iter().any(|x| x.caption.contains("sighs")));
    assert!(p[1].cut_off && p[2].barges_in);
}

#[test]
fn words_keep_the_authors_spelling_and_place() {
    let mut e = Episode::parse(
        "t.txt",
        "Ann: Ask Nguyen about\n  [Kokoro](/kˈOkəɹO/) and $4.1 billion.\n",
        &crate::script::ParseOptions::default(),
    )
    .expect("parse");
    e.apply_lexicon(&crate::script::Lexicon::parse("lex", "Nguyen: win").expect("lexicon"));
    let p = plan_episode(&e).expect("plan");
    let s = speaks(&p[0]);
    let words: Vec<(&str, usize, usize)> = s[0]
        .words
        .iter()
        .map(|w| (w.text.as_str(), w.at.line, w.at.column))
        .collect();
    assert_eq!(
        words,
        [
            ("Ask", 1, 6),
            ("Nguyen", 1, 10),
            ("about", 1, 17),
            ("Kokoro", 2, 4),
            ("and", 2, 23),
            ("$4.1 billion", 2, 27)
        ]
    );
    // Each word's phonemes are its own, in order.
    let chars: Vec<char> = s[0].phonemes.chars().collect();
    let said = |k: usize| {
        chars[s[0].words[k].phonemes.clone()]
            .iter()
            .collect::<String>()
    };
    assert_eq!(said(3), "kˈOkəɹO");
    assert!(said(1).starts_with('w'), "{}", said(1));
    assert!(s[0]
        .words
        .windows(2)
        .all(|w| w[0].phonemes.end <= w[1].phonemes.start));
}

#[test]
fn a_respelling_said_as_two_words_is_one_word_and_two_of_them_are_two() {
    let mut run = Run::default();
    run.push_text("Ask ");
    run.push_respelled("Siobhan", "shiv awn");
    run.push_text(" ");
    run.push_respelled("Siobhan", "shiv awn");
    run.push_text(".");
    let (_, words) = phonemize_sentence(&run, 0..run.text.len(), Language::EnUs).unwrap();
    let written: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(written, ["Ask", "Siobhan", "Siobhan"]);
    assert!(words.windows(2).all(|w| w[0].1.end <= w[1].1.start));
}

#[test]
fn placeholders_round_trip() {
    for k in [0, 1, 77, 5000] {
        assert_eq!(placeholder_index(placeholder(k)), Some(k));
    }
    assert_eq!(placeholder_index('a'), None);
}

#[test]
fn cues_ride_on_their_word_or_stand_between_sentences() {
    let p = plan("Ann: One two [sound: a.wav] three. Four.\n[sound: b.wav]\nFive [sound: c.wav]\n");
    let steps: Vec<String> = p[0]
        .steps
        .iter()
        .map(|s| match s {
            Step::Speak(x) => {
                let cues: Vec<String> = x
                    .sounds
                    .iter()
                    .map(|i| {
                        format!(
                            "{}@{}",
                            i.cue.action.file().unwrap_or_default(),
                            x.words[i.word].text
                        )
                    })
                    .collect();
                format!("{} {cues:?}", x.caption)
            }
            Step::Silence(_) => "silence".to_owned(),
            Step::Sound(s) => format!(
                "{} alone={} wait={:?}",
                s.cue.action.file().unwrap_or_default(),
                s.cue.alone,
                s.wait
            ),
        })
        .collect();
    assert_eq!(
        steps,
        [
            "One two three. [\"a.wav@three\"]",
            "Four. []",
            "b.wav alone=true wait=None",
            "Five []",
            "c.wav alone=false wait=None",
        ]
    );
    assert!(p[0].speaks() && !p[0].is_silent());
    let only = plan("Ann: Hi.\nBen: [sound: x.wav]\n");
    assert!(!only[1].speaks() && !only[1].is_silent(), "a line of sound");
}
