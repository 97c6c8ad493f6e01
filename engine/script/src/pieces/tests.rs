//! The turn scanner: directives, directions, clean-up.

use std::borrow::Cow;

use super::*;

fn pieces(s: &str) -> Vec<Piece> {
    pieces_styled(s, TextStyle::Plain)
}

fn pieces_styled(s: &str, style: TextStyle) -> Vec<Piece> {
    let seg = TextSpan {
        position: Position::new(3, 5),
        text: Cow::Borrowed(s),
        fixed: false,
    };
    parse_pieces("f", &[seg], style, &mut Vec::new()).unwrap()
}

fn t(s: &str) -> Piece {
    Piece::text(s)
}

#[test]
fn directives_become_structure() {
    assert_eq!(
        pieces("Well [pause:1.5s] then [rate:1.2] say [Kokoro](/kˈOkəɹO/) now."),
        [
            t("Well "),
            Piece::Pause { secs: 1.5 },
            t(" then "),
            Piece::Rate { rate: 1.2 },
            t(" say "),
            Piece::Phonemes {
                text: "Kokoro".into(),
                ipa: "kˈOkəɹO".into()
            },
            t(" now."),
        ]
    );
    assert_eq!(pieces("[PAUSE: 500ms]"), [Piece::Pause { secs: 0.5 }]);
    assert_eq!(pieces("[speed:0.8x]"), [Piece::Rate { rate: 0.8 }]);
}

#[test]
fn stage_directions_in_brackets_and_parentheses() {
    assert_eq!(
        pieces("Oh (laughs) really?  [_Enter Lane._]"),
        [
            t("Oh "),
            Piece::Direction {
                text: "laughs".into()
            },
            t(" really? "),
            Piece::Direction {
                text: "Enter Lane.".into()
            },
        ]
    );
    assert_eq!(
        pieces("(a (nested) aside) yes"),
        [
            Piece::Direction {
                text: "a (nested) aside".into()
            },
            t(" yes")
        ]
    );
}

#[test]
fn bad_directive_is_an_error_at_its_bracket() {
    let seg = TextSpan {
        position: Position::new(3, 5),
        text: Cow::Borrowed("ok [pause:soon] go"),
        fixed: false,
    };
    let e = parse_pieces("ep.txt", &[seg], TextStyle::Plain, &mut Vec::new()).unwrap_err();
    assert_eq!((e.line, e.column), (3, 8));
    assert!(
        e.to_string().starts_with("ep.txt:3:8: `[pause:soon]`"),
        "{e}"
    );
    for bad in [
        "[rate:0]",
        "[rate:9]",
        "[pause:-1]",
        "[pause:61s]",
        "[rate:NaN]",
    ] {
        let seg = TextSpan {
            position: Position::START,
            text: Cow::Borrowed(bad),
            fixed: false,
        };
        assert!(parse_pieces("f", &[seg], TextStyle::Plain, &mut Vec::new()).is_err());
    }
}

#[test]
fn unclosed_brackets_are_text_with_one_warning() {
    let seg = TextSpan {
        position: Position::new(2, 4),
        text: Cow::Borrowed("a ( b [ c ] ) d ("),
        fixed: false,
    };
    let mut w = Vec::new();
    let p = parse_pieces("f", &[seg], TextStyle::Plain, &mut w).unwrap();
    assert_eq!(p.len(), 3, "{p:?}");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].position, Position::new(2, 20));
}

#[test]
fn links_keep_their_words() {
    assert_eq!(
        pieces("see [our site](https://x.y) ok"),
        [t("see our site ok")]
    );
}

#[test]
fn markdown_and_xml_clean_up() {
    assert_eq!(
        pieces_styled(
            "a **bold** and _it_ but snake_case `code`",
            TextStyle::Markdown
        ),
        [t("a bold and it but snake_case code")]
    );
    assert_eq!(
        pieces_styled("Q&amp;A &lt;3 &#233;t&#xE9; &bogus; & more", TextStyle::Xml),
        [t("Q&A <3 été &bogus; & more")]
    );
}

#[test]
fn multi_segment_positions_and_joins() {
    let segs = [
        TextSpan {
            position: Position::new(1, 7),
            text: Cow::Borrowed("first (a"),
            fixed: false,
        },
        TextSpan {
            position: Position::new(2, 1),
            text: Cow::Borrowed("b) [pause:x]"),
            fixed: false,
        },
    ];
    let e = parse_pieces("f", &segs, TextStyle::Plain, &mut Vec::new()).unwrap_err();
    assert_eq!((e.line, e.column), (2, 4));
}

/// The words a turn speaks, and its directions, for the emphasis cases.
fn spoken_and_directions(s: &str, style: TextStyle) -> (String, Vec<String>, usize) {
    let seg = TextSpan {
        position: Position::new(1, 1),
        text: Cow::Borrowed(s),
        fixed: false,
    };
    let mut warnings = Vec::new();
    let pieces = parse_pieces("f", &[seg], style, &mut warnings).unwrap();
    let mut spoken = String::new();
    let mut directions = Vec::new();
    for p in pieces {
        match p {
            Piece::Text { text } => spoken.push_str(&text),
            Piece::Direction { text } => directions.push(text),
            _ => {}
        }
    }
    let spoken = spoken.split_whitespace().collect::<Vec<_>>().join(" ");
    (spoken, directions, warnings.len())
}

#[test]
fn actions_in_emphasis_marks_are_directions_where_directions_stand() {
    for style in [TextStyle::Plain, TextStyle::Markdown] {
        let run = |s: &str| spoken_and_directions(s, style);
        assert_eq!(
            run("*laughs* So, how many cups?"),
            ("So, how many cups?".into(), vec!["laughs".into()], 0)
        );
        assert_eq!(
            run("Sure. _takes a sip_ Lovely."),
            ("Sure. Lovely.".into(), vec!["takes a sip".into()], 0)
        );
        assert_eq!(
            run("That's so funny **clears throat**"),
            ("That's so funny".into(), vec!["clears throat".into()], 0)
        );
        // Emphasis in speech stays speech: a stressed word, an adverb, a verb in a sentence.
        assert_eq!(run("I *never* said that.").0, "I never said that.");
        assert_eq!(run("*Seriously*, no.").0, "Seriously, no.");
        assert_eq!(run("That's what he *says*").0, "That's what he says");
        assert_eq!(run("snake_case").0, "snake_case");
        // A stage word inside a sentence is read, and the writer is told.
        let (spoken, directions, warnings) = run("Turn the *music* down.");
        assert_eq!(
            (spoken.as_str(), directions.len(), warnings),
            ("Turn the music down.", 0, 1)
        );
    }
}
