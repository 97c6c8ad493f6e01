//! The cue editor's rewrite of a cue's options in the script text, and the parser's refusals.

use super::*;

fn doc(text: &str) -> Document {
    Document::new("ep", text.to_owned(), None)
}

fn volume(v: &str) -> CueOptions {
    CueOptions {
        volume: Some(v.into()),
        fade: None,
    }
}

fn both(v: &str, f: &str) -> CueOptions {
    CueOptions {
        volume: Some(v.into()),
        fade: Some(f.into()),
    }
}

/// The first cue's action in `d`'s parse.
fn first(d: &Document) -> CueAction {
    let ep = d.parsed.as_ref().expect("parses");
    ep.sounds().next().expect("a cue").1.action.clone()
}

#[test]
fn an_option_written_is_replaced_where_it_stands_and_the_rest_is_kept() {
    let mut d = doc("Ann: Hi.\n[sound: sfx/door slam.wav overlap=2s vol=-6dB fade=1s]\nBen: Yo.\n");
    let cue = d
        .set_cue_options(Position::new(2, 1), &both("-3", "500ms"))
        .expect("set");
    assert_eq!(
        cue,
        "[sound: sfx/door slam.wav overlap=2s volume=-3dB fade=500ms]"
    );
    assert_eq!(
        d.text,
        "Ann: Hi.\n[sound: sfx/door slam.wav overlap=2s volume=-3dB fade=500ms]\nBen: Yo.\n"
    );
    assert_eq!(
        first(&d),
        CueAction::Sound {
            file: "sfx/door slam.wav".into(),
            volume_db: -3.0,
            fade_secs: 0.5,
            overlap_secs: 2.0
        }
    );
    assert_eq!(d.revision, 1, "one edit");
}

#[test]
fn a_missing_option_is_added_after_the_last_word() {
    // A bed with only `duck=`: both added after it, the duck kept.
    let mut d = doc("[bed: \"music/theme.mp3\" duck=9dB]\nAnn: Hi.\n");
    d.set_cue_options(Position::new(1, 1), &both("-20", "3"))
        .expect("set");
    assert_eq!(
        d.text,
        "[bed: \"music/theme.mp3\" duck=9dB volume=-20dB fade=3s]\nAnn: Hi.\n"
    );
    assert_eq!(
        first(&d),
        CueAction::Bed {
            file: "music/theme.mp3".into(),
            volume_db: -20.0,
            fade_secs: 3.0,
            duck_db: 9.0
        }
    );
    // A bare cue, with commas between its words: the new one after a comma too; a cue among
    // a turn's words (column 10) is found by its column.
    let mut d = doc("Ann: Hi, [sound: ding.wav] and on.\n[sound: a.wav, overlap=1s]\nBen: Yo.\n");
    d.set_cue_options(Position::new(1, 10), &volume("-6 dB"))
        .expect("set");
    d.set_cue_options(Position::new(2, 1), &volume("2"))
        .expect("set");
    assert_eq!(
        d.text,
        "Ann: Hi, [sound: ding.wav volume=-6dB] and on.\n[sound: a.wav, overlap=1s, volume=2dB]\nBen: Yo.\n"
    );
    // `[bed: off]` takes a fade.
    let mut d = doc("[bed: a.mp3]\nAnn: Hi.\n[bed: off]\nBen: Yo.\n");
    d.set_cue_options(
        Position::new(3, 1),
        &CueOptions {
            volume: None,
            fade: Some("4".into()),
        },
    )
    .expect("set");
    assert!(d.text.contains("[bed: off fade=4s]"), "{}", d.text);
}

#[test]
fn crlf_scripts_keep_their_line_endings() {
    let text = "Ann: Hi.\r\n[sound: a.wav fade=1s]\r\nBen: Yo.\r\n";
    let mut d = doc(text);
    d.set_cue_options(Position::new(2, 1), &both("-9", "0.2"))
        .expect("set");
    assert_eq!(
        d.text,
        "Ann: Hi.\r\n[sound: a.wav fade=0.2s volume=-9dB]\r\nBen: Yo.\r\n"
    );
    assert!(
        matches!(first(&d), CueAction::Sound { volume_db, .. } if (volume_db + 9.0).abs() < 1e-6)
    );
}

#[test]
fn a_value_the_parser_refuses_leaves_the_script_unchanged_with_the_parser_s_reason() {
    let text = "Ann: Hi.\n[bed: a.mp3 volume=-18dB]\nBen: Yo.\n";
    let mut d = doc(text);
    let e = d
        .set_cue_options(Position::new(2, 1), &volume("20"))
        .expect_err("out of range");
    assert_eq!(
        e,
        CueEditError::Refused {
            reason: "`volume=20dB`: write a level from -60 to +12 dB, such as `volume=-18dB`"
                .into()
        }
    );
    let e = d
        .set_cue_options(Position::new(2, 1), &both("-6", "31"))
        .expect_err("fade too long");
    assert!(e.to_string().contains("from 0 to 30 s"), "{e}");
    let e = d
        .set_cue_options(Position::new(2, 1), &volume("loud"))
        .expect_err("not a level");
    assert!(e.to_string().contains("`volume=loud`"), "{e}");
    // A value that would split the cue never reaches the text.
    let e = d
        .set_cue_options(Position::new(2, 1), &volume("-6 fade=3"))
        .expect_err("two options");
    assert!(matches!(e, CueEditError::BadValue { .. }), "{e}");
    // No cue there (the script changed since the lane was drawn).
    assert_eq!(
        d.set_cue_options(Position::new(1, 1), &volume("-6")),
        Err(CueEditError::NoCue {
            at: Position::new(1, 1)
        })
    );
    assert_eq!(d.text, text);
    assert_eq!(d.revision, 0, "nothing changed");
}

#[test]
fn the_editor_shows_what_the_parser_reads_defaults_included() {
    let d = doc("[bed: a.mp3 duck=3dB]\nAnn: Hi.\n[sound: b.wav volume=-4.5dB]\n[bed: off]\n");
    let ep = d.parsed.as_ref().expect("parses");
    let shown: Vec<_> = ep.sounds().map(|(_, c)| shown_values(&c.action)).collect();
    assert_eq!(
        shown,
        [
            (Some("-15".to_owned()), "2".to_owned()),
            (Some("-4.5".to_owned()), "0.01".to_owned()),
            (None, "2".to_owned()),
        ]
    );
}
