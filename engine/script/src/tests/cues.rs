//! Sound cues as each layout carries them: where they land in the episode, where they were
//! written, whether speech waits for them, and the errors that name their place.

use crate::{CueAction, Episode, LineKind, ParseOptions, Piece, ScriptFormat, SoundCue};

fn parse(text: &str) -> Episode {
    Episode::parse("ep.txt", text, &ParseOptions::default()).expect("parses")
}

fn parse_as(text: &str, format: ScriptFormat) -> Episode {
    let options = ParseOptions {
        format: Some(format),
        ..ParseOptions::default()
    };
    Episode::parse("ep.txt", text, &options).expect("parses")
}

fn error(text: &str) -> String {
    Episode::parse("ep.txt", text, &ParseOptions::default())
        .expect_err("an error")
        .to_string()
}

/// (line index, file or "off", source line, column, alone) of every cue.
fn cues(e: &Episode) -> Vec<(usize, String, usize, usize, bool)> {
    e.sounds()
        .map(|(i, c)| {
            let file = c.action.file().unwrap_or("off").to_owned();
            (i, file, c.position.line, c.position.column, c.alone)
        })
        .collect()
}

#[test]
fn cues_between_turns_lead_the_next_turn_and_the_outro_closes_the_last() {
    let e = parse(
        "[bed: music/theme.mp3 volume=-20dB]\n[sound: intro.wav overlap=1s]\nAnn: Welcome.\n  [sound: sting.wav]\nBen: Thanks.\n[bed: off]\n[sound: outro.flac]\n",
    );
    assert_eq!(
        cues(&e),
        [
            (0, "music/theme.mp3".into(), 1, 1, true),
            (0, "intro.wav".into(), 2, 1, true),
            // Inside Ann's open turn, alone on its line: speech waits for it.
            (0, "sting.wav".into(), 4, 3, true),
            (1, "off".into(), 6, 1, true),
            (1, "outro.flac".into(), 7, 1, true),
        ]
    );
    // The cues come first in Ann's turn, in the order written.
    assert!(matches!(
        &e.lines[0].pieces[..2],
        [Piece::Sound { cue: SoundCue { action: CueAction::Bed { volume_db, .. }, .. } }, Piece::Sound { .. }]
            if (*volume_db + 20.0).abs() < 1e-6
    ));
    assert_eq!(e.spoken_text(&e.lines[0]), "Welcome.");
    // Every line is accounted for: a cue's line belongs to the turn that plays it.
    assert!(e.skipped.is_empty(), "{:?}", e.skipped);
    assert_eq!(e.lines[0].source_lines, [1, 2, 3, 4]);
    assert_eq!(e.lines[1].source_lines, [5, 6, 7]);
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
}

#[test]
fn a_cue_among_words_plays_at_its_place_and_speech_goes_on() {
    let e = parse("Ann: I opened the door [sound: creak.ogg] and there it was.\nBen: Oh.\n");
    assert_eq!(cues(&e), [(0, "creak.ogg".into(), 1, 24, false)]);
    assert_eq!(
        e.spoken_text(&e.lines[0]),
        "I opened the door and there it was."
    );
    // On the label's line, even with nothing else there, it is among the turn's words.
    let e = parse("Ann: [sound: knock.wav]\nCome in.\n");
    assert_eq!(cues(&e), [(0, "knock.wav".into(), 1, 6, false)]);
}

#[test]
fn a_turn_with_only_a_cue_still_plays_it() {
    let e = parse("Ann: Hello.\nBen: [sound: shrug.wav]\n");
    assert_eq!(e.lines.len(), 2);
    assert_eq!(cues(&e), [(1, "shrug.wav".into(), 2, 6, false)]);
}

#[test]
fn a_cue_that_names_no_file_stays_a_direction_as_before() {
    let e = parse("Ann: Hello.\n[Sound: the wind howls]\nBen: Brr.\nSFX: door slams\n");
    assert_eq!(cues(&e), []);
    assert_eq!(e.directions.len(), 2, "{:?}", e.directions);
    assert!(e
        .skipped
        .iter()
        .all(|s| s.kind == LineKind::Direction && [2, 4].contains(&s.position.line)));
}

#[test]
fn audio_drama_labels_that_name_a_file_play_it_with_a_notice() {
    let e = parse(
        "MUSIC: theme.mp3\nAnn: Hello.\nSFX: door.wav\nBen: Hi.\nSFX: [sound: bell.wav volume=-6dB]\nAnn: Bye.\n",
    );
    let got: Vec<(String, bool)> = e
        .sounds()
        .map(|(_, c)| {
            (
                c.action.file().unwrap_or_default().to_owned(),
                matches!(c.action, CueAction::Bed { .. }),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("theme.mp3".into(), true),
            ("door.wav".into(), false),
            ("bell.wav".into(), false)
        ]
    );
    // `SFX: [sound: …]` is exact: it needs no notice; the plain file names each get one.
    let notices: Vec<&str> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("name a file"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(notices.len(), 2, "{:?}", e.warnings);
    assert!(
        notices.iter().any(|m| m.contains("`[bed: theme.mp3]`")),
        "{notices:?}"
    );
}

#[test]
fn bad_cues_name_file_line_and_column() {
    // The option's own column.
    assert!(
        error("Ann: Hi.\nBen: Ok [sound: a.wav volume=loud] go.\n")
            .starts_with("ep.txt:2:23: `[sound: a.wav volume=loud]` is not a sound cue"),
        "{}",
        error("Ann: Hi.\nBen: Ok [sound: a.wav volume=loud] go.\n")
    );
    let e = error("[bed: theme.mp3 duck=99dB]\nAnn: Hi.\n");
    assert!(e.starts_with("ep.txt:1:17: "), "{e}");
    assert!(e.contains("from 0 to 40 dB"), "{e}");
    let e = error("Ann: Hi.\n  [sound: clip.wma]\n");
    assert!(e.starts_with("ep.txt:2:11: "), "{e}");
    assert!(e.contains("cannot play"), "{e}");
}

#[test]
fn every_layout_with_inline_directions_carries_cues() {
    let md = parse_as(
        "# Cold open\n\n[bed: bed.ogg]\n\n**Jo:** It's two [sound: clock.wav] in the morning.\n",
        ScriptFormat::Markdown,
    );
    assert_eq!(
        cues(&md),
        [
            (0, "bed.ogg".into(), 3, 1, true),
            (0, "clock.wav".into(), 5, 18, false)
        ]
    );
    let dia = parse_as(
        "[S1] Okay [sound: click.wav] we're recording. [S2] Good.\n",
        ScriptFormat::Dia,
    );
    assert_eq!(cues(&dia), [(0, "click.wav".into(), 1, 11, false)]);
    let play = parse_as(
        "ALGERNON.\nDid you hear what I was playing, Lane?\n\n[sound: piano.flac]\n\nLANE.\nI didn't think it polite to listen, sir.\n",
        ScriptFormat::Play,
    );
    assert_eq!(cues(&play), [(1, "piano.flac".into(), 4, 1, true)]);
    let pod = parse_as(
        "<Person1>Today [sound: ding.wav] the pencil.</Person1><Person2>Lead-free.</Person2>\n",
        ScriptFormat::Podcastfy,
    );
    assert_eq!(cues(&pod).len(), 1);
    let json = parse_as(
        r#"[{"speaker": "Rosa", "text": "[sound: intro.wav] Welcome."}]"#,
        ScriptFormat::Json,
    );
    assert_eq!(cues(&json).len(), 1);
}

#[test]
fn the_check_report_lists_cues_with_their_options() {
    let e = parse("[bed: theme.mp3]\nAnn: Hi [sound: a.wav overlap=2s].\n");
    let report = e.check_report();
    let sounds = report["sounds"].as_array().expect("sounds");
    assert_eq!(sounds.len(), 2);
    assert_eq!(sounds[0]["kind"], "bed");
    assert_eq!(sounds[0]["duck_db"], 12.0);
    assert_eq!(sounds[1]["file"], "a.wav");
    assert_eq!(sounds[1]["overlap_secs"], 2.0);
    assert_eq!(sounds[1]["column"], 9);
    assert_eq!(sounds[1]["alone"], false);
}

#[test]
fn a_direction_in_bold_is_a_direction() {
    // Chat assistants bold their cues; before the first turn one was taken for narration (with
    // a warning to give it a speaker), after it one vanished into the turn above.
    let e = parse_as(
        "**[INTRO MUSIC FADES IN]**\n\n**Alex:** Hi.\n\n**[SFX: Door slam]**\n\n*(pause)*\n\n**Jamie:** What?\n",
        ScriptFormat::Markdown,
    );
    let directions: Vec<usize> = e
        .skipped
        .iter()
        .filter(|s| s.kind == LineKind::Direction)
        .map(|s| s.position.line)
        .collect();
    assert_eq!(directions, [1, 5, 7], "{:?}", e.skipped);
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.spoken_text(&e.lines[0]), "Hi.");
    // Words after the show's own cue with no speaker still go to the turn above, but say so.
    let e = parse("Alex: Bye now.\n\n[OUTRO MUSIC]\n\nThanks for listening!\n\nAlex: Really.\n(laughs)\nReally.\n");
    assert_eq!(e.spoken_text(&e.lines[0]), "Bye now. Thanks for listening!");
    let said: Vec<usize> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("comes after `[OUTRO MUSIC]`"))
        .map(|w| w.position.line)
        .collect();
    assert_eq!(said, [5], "{:?}", e.warnings);
}
