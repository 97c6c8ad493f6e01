//! The odd real-world layouts that once lost or invented lines, each read as a reader would.

use super::{Episode, LineKind, ParseOptions, ScriptFormat};

fn parse(text: &str) -> Episode {
    Episode::parse("ep.txt", text, &ParseOptions::default()).unwrap()
}

fn said(e: &Episode) -> Vec<(String, String)> {
    e.lines
        .iter()
        .map(|l| (l.speaker.clone(), e.spoken_text(l)))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

fn warned_at(e: &Episode, line: usize) -> bool {
    e.warnings.iter().any(|w| w.position.line == line)
}

#[test]
fn shaw_name_direction_speech() {
    let e = parse(
        "THE AUNT [at the window, not turning round] It has been raining since noon.\n\nTHE NEPHEW. Has it? [He sits] I had not noticed.\n\nTHE AUNT. You never do.\n",
    );
    assert_eq!(e.format, ScriptFormat::Play);
    assert_eq!(
        said(&e),
        pairs(&[
            ("THE AUNT", "It has been raining since noon."),
            ("THE NEPHEW", "Has it? I had not noticed."),
            ("THE AUNT", "You never do."),
        ])
    );
}

#[test]
fn one_letter_word_after_the_name_is_speech() {
    let e = parse(
        "HENRIETTA MARLOWE. Do you think so?\n\nJOHN. I do.\n\nHENRIETTA MARLOWE. I … I suppose so.\n",
    );
    assert_eq!(e.cast.members.len(), 2, "{:?}", e.cast);
    assert_eq!(e.lines[2].speaker, "HENRIETTA MARLOWE");
    assert_eq!(e.spoken_text(&e.lines[2]), "I … I suppose so.");
    // Even heard only once, the name is not invented from the speech.
    let e = parse("JOHN. Well?\n\nHENRIETTA MARLOWE. I … I suppose so.\n");
    assert_eq!(e.lines[1].speaker, "HENRIETTA MARLOWE");
}

#[test]
fn lower_case_variant_is_the_same_speaker_with_a_notice() {
    let e = parse("BOB: One.\nAlice: Two.\nbob: Three.\n");
    assert_eq!(
        said(&e),
        pairs(&[("BOB", "One."), ("Alice", "Two."), ("BOB", "Three.")])
    );
    assert_eq!(e.cast.members.len(), 2);
    assert!(warned_at(&e, 3), "{:?}", e.warnings);
}

#[test]
fn names_with_parentheses_emoji_and_unicode_variants() {
    let e = parse("Ana (Annie) 🌍: Hola.\nJose\u{301}: Hi.\nJosé: Again.\n\u{200f}دانا\u{200f}: مرحبا\nBOB\u{ff1a} Yo.\nbob: Me.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Ana (Annie) 🌍", "Hola."),
            ("José", "Hi."),
            ("José", "Again."),
            ("دانا", "مرحبا"),
            ("BOB", "Yo."),
            ("BOB", "Me."),
        ])
    );
    assert_eq!(e.cast.members.len(), 4);
}

#[test]
fn mixed_layouts_are_read_line_by_line_and_reported() {
    let e = parse(
        "{\"speaker\": \"Zoe\", \"text\": \"Welcome to the show.\"}\n- KAI: Thanks for having me.\n> ZOE: Let's start.\nKAI — Sure thing.\nZOE. Great.\nKai: Done.\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("Zoe", "Welcome to the show."),
            ("KAI", "Thanks for having me."),
            ("Zoe", "Let's start."),
            ("KAI", "Sure thing."),
            ("Zoe", "Great."),
            ("KAI", "Done."),
        ])
    );
    assert!(e.warnings.len() >= 3, "{:?}", e.warnings);
}

#[test]
fn emphasis_is_not_spoken_but_snake_case_is_kept() {
    let e = parse("ALICE: It _was_ *really* **huge**, see file_name and 2 * 3.\n");
    assert_eq!(
        e.spoken_text(&e.lines[0]),
        "It was really huge, see file_name and 2 * 3."
    );
}

#[test]
fn parentheses_inside_a_sentence_are_speech() {
    let e = parse(
        "Host: The launch slipped to spring (which, as anyone who follows these things knows, means summer).\nGuest: (laughs) Right. I met Ana (my sister) there (waves).\nHost: Indeed (quietly) it is.\n(Music)\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            (
                "Host",
                "The launch slipped to spring (which, as anyone who follows these things knows, means summer)."
            ),
            ("Guest", "Right. I met Ana (my sister) there."),
            ("Host", "Indeed it is."),
        ])
    );
    assert_eq!(e.skipped.len(), 1);
    assert_eq!(e.skipped[0].kind, LineKind::Direction);
}

#[test]
fn every_unspoken_line_has_its_kind() {
    let e = parse(
        "THE IMPORTANCE OF BEING EARNEST\n\nFIRST ACT\n\n[Lane is arranging tea.]\n\nAlgernon enters, reading.\nHe sits.\n\nALGERNON. Did you hear, Lane?\n\nLANE. Yes, sir.\n",
    );
    let kinds: Vec<(usize, LineKind)> = e
        .skipped
        .iter()
        .map(|s| (s.position.line, s.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, LineKind::Narration),
            (3, LineKind::Heading),
            (5, LineKind::Direction),
            (7, LineKind::Narration),
            (8, LineKind::Narration),
        ]
    );
    assert_eq!(e.lines.len(), 2);
}

#[test]
fn unspoken_text_that_starts_like_a_turn_is_warned() {
    // Before the first label nothing is anyone's, but `Bob:`-like text there is reported.
    let e = Episode::parse(
        "ep.txt",
        "Bob (off) — but nobody hears this\n\nAlice: Hi.\nBob: Hello.\n",
        &ParseOptions {
            format: Some(ScriptFormat::Name),
            ..ParseOptions::default()
        },
    )
    .unwrap();
    assert_eq!(e.skipped[0].kind, LineKind::Narration);
    assert!(
        e.warnings
            .iter()
            .any(|w| w.position.line == 1 && w.message.contains("starts like a turn of `Bob`")),
        "{:?}",
        e.warnings
    );
}
