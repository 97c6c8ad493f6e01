//! Tests across formats: the shipped examples, auto-detection, bad input.
//!
//! Per-format parser tests live beside each parser; these check what must hold whatever the
//! format: that the examples in `assets/examples` parse as what they claim to be, and that every
//! kind of bad input is either read or refused with a `FILE:LINE:COLUMN` message (never a
//! panic), and that big inputs take linear time. Property tests are in `properties.rs`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::*;

fn parse(text: &str) -> Result<Episode, ScriptError> {
    Episode::parse("ep.txt", text, &ParseOptions::default())
}

fn with(options: ParseOptions, text: &str) -> Result<Episode, ScriptError> {
    Episode::parse("ep.txt", text, &options)
}

const EXAMPLES: [(&str, &str, ScriptFormat); 7] = [
    (
        "interview.txt",
        include_str!("../../../../assets/examples/interview.txt"),
        ScriptFormat::Name,
    ),
    (
        "vibevoice.txt",
        include_str!("../../../../assets/examples/vibevoice.txt"),
        ScriptFormat::VibeVoice,
    ),
    (
        "dia.txt",
        include_str!("../../../../assets/examples/dia.txt"),
        ScriptFormat::Dia,
    ),
    (
        "podcastfy.xml",
        include_str!("../../../../assets/examples/podcastfy.xml"),
        ScriptFormat::Podcastfy,
    ),
    (
        "episode.md",
        include_str!("../../../../assets/examples/episode.md"),
        ScriptFormat::Markdown,
    ),
    (
        "play.txt",
        include_str!("../../../../assets/examples/play.txt"),
        ScriptFormat::Play,
    ),
    (
        "episode.json",
        include_str!("../../../../assets/examples/episode.json"),
        ScriptFormat::Json,
    ),
];

#[test]
fn every_example_is_detected_and_reads_cleanly() {
    for (name, text, format) in EXAMPLES {
        let e =
            Episode::parse(name, text, &ParseOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.format, format, "{name}");
        assert!(
            (6..=16).contains(&e.lines.len()),
            "{name}: {} lines",
            e.lines.len()
        );
        assert!(e.warnings.is_empty(), "{name}: {:?}", e.warnings);
        let voices: HashSet<_> = e.cast.members.iter().map(|m| &m.voice).collect();
        assert_eq!(
            voices.len(),
            e.cast.members.len(),
            "{name}: distinct voices"
        );
        for line in &e.lines {
            let said = e.spoken_text(line);
            assert!(
                !said.is_empty() && !said.contains(['(', '[', '<', '*']),
                "{name}: {said:?}"
            );
        }
        // The same file forced to its own format reads the same.
        let forced = ParseOptions {
            format: Some(format),
            ..ParseOptions::default()
        };
        assert_eq!(Episode::parse(name, text, &forced).unwrap(), e, "{name}");
    }
}

#[test]
fn examples_keep_their_structure() {
    let get =
        |i: usize| Episode::parse(EXAMPLES[i].0, EXAMPLES[i].1, &ParseOptions::default()).unwrap();
    let interview = get(0);
    let okafor = interview.cast.get("dr. okafor").unwrap();
    assert_eq!(
        (okafor.voice.as_str(), okafor.speed),
        ("bm_george", Some(0.95))
    );
    assert!(interview.lines[5]
        .pieces
        .contains(&Piece::Pause { secs: 0.5 }));
    let md = get(4);
    assert_eq!(
        md.settings.title.as_deref(),
        Some("The Night Shift, episode 14")
    );
    let chapters: Vec<_> = md
        .chapters
        .iter()
        .map(|c| (c.title.as_str(), c.first_line))
        .collect();
    assert_eq!(
        chapters,
        [("Cold open", 0), ("Listener mail", 2), ("Sign-off", 6)]
    );
    let play = get(5);
    assert_eq!(
        play.lines[0].speaker, "Algernon",
        "the cast's spelling of ALGERNON"
    );
    assert_eq!(play.cast.get("LANE").unwrap().voice, "bm_lewis");
    assert!(play
        .directions
        .iter()
        .any(|d| d.text.starts_with("Lane is arranging")));
    let json = get(6);
    assert_eq!(
        json.cast.get("Theo").unwrap().voice,
        "am_fenrir:0.6+am_michael:0.4"
    );
    assert_eq!(json.chapters.len(), 2);
}

#[test]
fn format_override_beats_detection() {
    let text = "Alice: see [S1] there\nBob: ok";
    assert_eq!(parse(text).unwrap().format, ScriptFormat::Name);
    let dia = with(
        ParseOptions {
            format: Some(ScriptFormat::Dia),
            ..ParseOptions::default()
        },
        text,
    )
    .unwrap();
    assert_eq!(dia.lines.len(), 1);
    assert_eq!(dia.lines[0].speaker, "S1");
    let fm = parse("---\nformat: dia\n---\nAlice: see [S1] there\n").unwrap();
    assert_eq!(fm.format, ScriptFormat::Dia);
}

#[test]
fn empty_and_whitespace_files_say_what_to_write() {
    let e = parse("").unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Empty);
    assert!(
        e.to_string()
            .starts_with("ep.txt:1:1: the script is empty; write"),
        "{e}"
    );
    let e = parse(" \n\t\r\n  ").unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::WhitespaceOnly);
    let e = Episode::parse_bytes("bom.txt", b"\xEF\xBB\xBF", &ParseOptions::default()).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Empty);
    let e = parse("---\ntitle: x\n---\n\n").unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::NoSpeech);
    let e = parse("alice: hi\nbob: two labels nobody vouches for").unwrap_err();
    assert!(matches!(e.kind, ScriptErrorKind::UnknownFormat { .. }));
    assert!(e.to_string().contains("--format"), "{e}");
}

#[test]
fn label_without_text_is_an_error_at_the_label() {
    let e = parse("Alice: Hi.\n  Bob:\nAlice: Bye.").unwrap_err();
    assert_eq!((e.line, e.column), (2, 3));
    assert!(
        e.to_string()
            .contains("`Bob` has a label but nothing to say; write the words"),
        "{e}"
    );
    // A turn of stage directions only is skipped with a warning instead.
    let ok = parse("Alice: Hi.\nBob: (shrugs)\nAlice: Bye.").unwrap();
    assert_eq!(ok.lines.len(), 2);
    assert_eq!(ok.warnings[0].position, Position::new(2, 1));
}

#[test]
fn binary_garbage_is_refused() {
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let e = Episode::parse_bytes("x.bin", &garbage, &ParseOptions::default()).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ScriptErrorKind::InvalidUtf8 { .. } | ScriptErrorKind::Binary { .. }
        ),
        "{e}"
    );
    let e = parse("Alice: hi\u{0}\u{1}\u{2}").unwrap_err();
    assert!(matches!(e.kind, ScriptErrorKind::Binary { .. }), "{e}");
    let ctrl: String = "\u{1}\u{2}\u{3}\u{4}A: b".repeat(20);
    assert!(matches!(
        parse(&ctrl).unwrap_err().kind,
        ScriptErrorKind::Binary { .. }
    ));
}

#[test]
fn utf16_and_crlf_read_like_utf8() {
    let text = "Zoë: Hello 👋\nBob: Hi.\n";
    let plain = parse(text).unwrap();
    for bytes in [
        [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect::<Vec<u8>>(),
        [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect(),
    ] {
        assert_eq!(
            Episode::parse_bytes("ep.txt", &bytes, &ParseOptions::default()).unwrap(),
            plain
        );
    }
    assert_eq!(parse(&text.replace('\n', "\r\n")).unwrap(), plain);
    assert_eq!(parse(&text.replace('\n', "\r")).unwrap(), plain);
}

#[test]
fn control_characters_are_blanked_with_a_warning() {
    let e = parse("Alice: bell\u{7}here\nBob: esc\u{1b}[0m ok").unwrap();
    assert_eq!(e.lines[0].spoken_text(false), "bell here");
    // One for the control characters, one for the `[` of the terminal escape left behind.
    assert_eq!(e.warnings.len(), 2, "{:?}", e.warnings);
    assert_eq!(e.warnings[0].position, Position::new(1, 12));
    assert!(e.warnings[0].message.starts_with("2 control characters"));
}

#[test]
fn emoji_and_right_to_left_names() {
    let e = parse("🎙️ Host: Welcome!\nأحمد: مرحبا بكم\nשרה: שלום\n🦊: Yip.\n").unwrap();
    let names: Vec<_> = e.cast.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["🎙️ Host", "أحمد", "שרה", "🦊"]);
    assert_eq!(e.lines[1].spoken_text(false), "مرحبا بكم");
    assert_eq!(e.lines[2].position, Position::new(3, 1));
}

#[test]
fn forty_speakers_need_an_option() {
    let text: String = (1..=40)
        .map(|i| format!("Guest {i}: Hello from number {i}."))
        .collect::<Vec<_>>()
        .join("\n");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.line, e.column), (29, 1));
    let message = e.to_string();
    assert!(
        message.starts_with("ep.txt:29:1: `Guest 29` is speaker number 29, but there are only 28"),
        "{message}"
    );
    assert!(
        message.contains("--reuse-voices") && message.contains("--any-language-voices"),
        "{message}"
    );
    let reuse = with(
        ParseOptions {
            reuse_voices: true,
            ..ParseOptions::default()
        },
        &text,
    )
    .unwrap();
    assert_eq!(reuse.cast.members.len(), 40);
    let any = with(
        ParseOptions {
            any_language_voices: true,
            ..ParseOptions::default()
        },
        &text,
    )
    .unwrap();
    let voices: HashSet<_> = any.cast.members.iter().map(|m| m.voice.as_str()).collect();
    assert_eq!(voices.len(), 40);
    let header = format!("---\nreuse_voices: true\n---\n{text}");
    assert!(parse(&header).is_ok());
}

#[test]
fn a_script_in_another_kokoro_language_is_cast_with_its_voices() {
    let spanish = "Ana: Hola a todos, bienvenidos al podcast de ciencia.\nLuis: Gracias, Ana. Hoy hablamos del cielo y de por qué es azul.\nAna: ¿Y cuántos años tienes tú?\nLuis: Tengo veinticinco años y vivo en Madrid.\n";
    let e = parse(spanish).unwrap();
    let voices: Vec<&str> = e.cast.members.iter().map(|m| m.voice.as_str()).collect();
    assert_eq!(voices, ["ef_dora", "em_alex"]);
    let said = |e: &Episode, what: &str| e.warnings.iter().any(|w| w.message.contains(what));
    assert!(said(&e, "written in Spanish"), "{:?}", e.warnings);
    // A voice the cast names that speaks another language is kept, and the author told.
    let e = parse(&format!("---\ncast:\n  Ana: af_heart\n---\n{spanish}")).unwrap();
    assert_eq!(e.cast.get("Ana").unwrap().voice, "af_heart");
    assert!(
        said(
            &e,
            "`Ana` is cast as `af_heart`, a voice that speaks English"
        ),
        "{:?}",
        e.warnings
    );
    // French has one stock voice: its two speakers share it, and hear why.
    let french = "Marie: Bonjour à tous et bienvenue dans notre podcast sur la science.\nPaul: Merci Marie, c'est un plaisir d'être ici avec vous aujourd'hui.\nMarie: Alors, pourquoi le ciel est-il bleu ?\n";
    let e = parse(french).unwrap();
    assert!(e.cast.members.iter().all(|m| m.voice == "ff_siwis"));
    assert!(
        said(&e, "`Marie` and `Paul` share `ff_siwis`"),
        "{:?}",
        e.warnings
    );
    // English stays as it was, without a word about language.
    let e = parse("Ana: Welcome back to the show, everyone.\nLuis: Thanks, Ana. Today we talk about why the sky is blue.\n").unwrap();
    assert!(e
        .cast
        .members
        .iter()
        .all(|m| m.voice.starts_with(['a', 'b'])));
    assert!(!said(&e, "written in"), "{:?}", e.warnings);
}

#[test]
fn ssml_in_a_turn_is_pauses_and_pronunciations_never_speech() {
    let e = parse("A: Hello there. <break time=\"1.5s\" /> Welcome to <emphasis>the</emphasis> show.\nB: Say <phoneme alphabet=\"ipa\" ph=\"təˈmɑːtoʊ\">tomato</phoneme>, the <sub alias=\"World Wide Web\">WWW</sub>.\nA: Type banter say <voice> here.\n").unwrap();
    assert_eq!(
        e.lines[0].pieces,
        [
            Piece::text("Hello there. "),
            Piece::Pause { secs: 1.5 },
            Piece::text(" Welcome to the show."),
        ]
    );
    assert!(e.lines[1].pieces.contains(&Piece::Phonemes {
        text: "tomato".into(),
        ipa: "təˈmɑːtoʊ".into()
    }));
    assert!(e.spoken_text(&e.lines[1]).contains("the World Wide Web."));
    // A placeholder in angle brackets is text, not a tag.
    assert_eq!(e.spoken_text(&e.lines[2]), "Type banter say <voice> here.");
    let notes: Vec<&str> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("SSML"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(notes.len(), 1, "{:?}", e.warnings);
    assert!(notes[0].contains("`<emphasis>` is not followed"));
}

#[test]
fn a_speaker_who_speaks_another_language_gets_its_voice_and_a_stray_line_is_told() {
    let lesson = "Host: Welcome back to Spanish in five minutes. Today we ask for directions.\nMaria: ¿Dónde está la biblioteca? La biblioteca está cerca del parque.\nHost: Where is the library? Once more, slowly, and then you try it.\nHost: Ahora tú: ¿dónde está la biblioteca, por favor?\nMaria: Muy bien. Gracias, amigo.\n";
    let e = parse(lesson).unwrap();
    // Maria speaks Spanish throughout: a Spanish voice; the host, who speaks English, an
    // English one, and said so.
    assert_eq!(e.cast.get("Maria").unwrap().voice, "ef_dora");
    assert!(e.cast.get("Host").unwrap().voice.starts_with('a'));
    assert!(
        e.warnings
            .iter()
            .any(|w| w.message.contains("`Host` speaks English in their lines")),
        "{:?}",
        e.warnings
    );
    // The host's one Spanish line is told; the English lines are not.
    let told: Vec<(usize, &str)> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("looks written in"))
        .map(|w| (w.position.line, w.message.as_str()))
        .collect();
    assert_eq!(told.len(), 1, "{:?}", e.warnings);
    assert_eq!(told[0].0, 4);
    assert!(
        told[0]
            .1
            .contains("in Spanish, which `af_heart` (Host's voice) reads with English sounds"),
        "{}",
        told[0].1
    );
}

#[test]
fn a_script_in_a_language_kokoro_lacks_is_named_not_taken_for_french() {
    let german = "ANNA: Guten Morgen! Wie geht es dir heute?\nBERND: Mir geht es gut, danke. Ich habe gestern ein neues Buch gelesen.\nANNA: Wirklich? Worum geht es in dem Buch?\n";
    let e = parse(german).unwrap();
    // Not the French voice (whatlang's nearest of Kokoro's eight), and said where.
    assert!(
        e.cast.members.iter().all(|m| m.voice.starts_with('a')),
        "{:?}",
        e.cast
    );
    let warning = e
        .warnings
        .iter()
        .find(|w| w.message.contains("looks written in German"))
        .unwrap_or_else(|| panic!("{:?}", e.warnings));
    assert_eq!(warning.position.line, 1);
    assert!(warning
        .message
        .contains("`ANNA` (af_heart), `BERND` (am_michael)"));
    // Speakers given Piper voices (any name that is not a Kokoro voice) are not warned about.
    let cast = "---\ncast:\n  ANNA: anna\n  BERND: bernd\n---\n";
    let e = parse(&format!("{cast}{german}")).unwrap();
    assert!(
        !e.warnings.iter().any(|w| w.message.contains("written in")),
        "{:?}",
        e.warnings
    );
}

#[test]
fn unknown_voices_are_found_by_the_hook() {
    let e = parse("# cast\nAlice: af_heart\nBob: af_bella:0.5+xx_nobody:0.5\n\nAlice: Hi.\nBob: Yo.\nCarl: Hey.").unwrap();
    let stock: HashSet<&str> = ENGLISH_FEMALE
        .iter()
        .chain(ENGLISH_MALE.iter())
        .copied()
        .collect();
    let err = e.validate_voices(&|v| stock.contains(v)).unwrap_err();
    assert_eq!(
        err.kind,
        ScriptErrorKind::UnknownVoice {
            speaker: "Bob".into(),
            voice: "xx_nobody".into()
        }
    );
    assert_eq!((err.line, err.column), (3, 1));
    assert!(
        e.validate_voices(&|v| v != "am_michael").is_err(),
        "automatic voices are checked too"
    );
    assert!(e.validate_voices(&|_| true).is_ok());
}

#[test]
fn contradicting_cast_header() {
    let e = parse("---\ncast:\n  Alice: af_heart\n  Alice: af_sky\n---\nAlice: Hi.").unwrap_err();
    assert!(matches!(e.kind, ScriptErrorKind::CastConflict { .. }));
    assert_eq!((e.line, e.column), (4, 3));
}

#[test]
fn stage_directions_can_be_kept() {
    let text = "[Music swells.]\nAlice: Hello (laughs) there.";
    let dropped = parse(text).unwrap();
    assert_eq!(dropped.lines.len(), 1);
    assert_eq!(dropped.directions[0].text, "Music swells.");
    let kept = with(
        ParseOptions {
            keep_stage_directions: true,
            ..ParseOptions::default()
        },
        text,
    )
    .unwrap();
    let said: Vec<_> = kept
        .lines
        .iter()
        .map(|l| (l.speaker.as_str(), kept.spoken_text(l)))
        .collect();
    assert_eq!(
        said,
        [
            (NARRATOR, "Music swells.".to_owned()),
            ("Alice", "Hello laughs there.".to_owned())
        ]
    );
}

#[test]
fn lexicon_applies_to_an_episode() {
    let mut e = parse("Alice: I love Kokoro.\nBob: Kokoro? Ask Nguyen.").unwrap();
    let lex = Lexicon::parse("lexicon.txt", "kokoro: /kˈOkəɹO/\nNguyen: win").unwrap();
    e.apply_lexicon(&lex);
    assert!(e
        .lines
        .iter()
        .all(|l| l.pieces.iter().any(|p| matches!(p, Piece::Phonemes { .. }))));
    // The author's spelling stays in the text (captions, the studio); it is read as respelled.
    assert_eq!(e.lines[1].spoken_text(false), "Kokoro? Ask Nguyen.");
    assert!(e.lines[1].pieces.iter().any(
        |p| matches!(p, Piece::Respelled { text, said } if text == "Nguyen" && said == "win")
    ));
}

/// Runs `f` and fails if it takes longer than `limit` (generous: a quadratic parser takes far
/// longer on these inputs, a linear one milliseconds).
fn timed<T>(limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < limit, "took {took:?}");
    out
}

#[test]
fn long_lines_and_many_lines_take_linear_time() {
    let long = format!("Alice: {}", "word ".repeat(10_000));
    assert_eq!(long.chars().count(), 50_007);
    let e = timed(Duration::from_secs(2), || parse(&long)).unwrap();
    assert_eq!(e.lines[0].spoken_text(false).len(), 49_999);
    let many: String = (0..10_000)
        .map(|i| {
            format!(
                "{}: Line {i} (aside) [pause:0.1s] done.",
                ["Alice", "Bob", "Carol"][i % 3]
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let e = timed(Duration::from_secs(2), || parse(&many)).unwrap();
    assert_eq!(e.lines.len(), 10_000);
    let dia = "[S1] a [S2] b ".repeat(20_000);
    let e = timed(Duration::from_secs(2), || parse(&dia)).unwrap();
    assert_eq!(e.lines.len(), 40_000);
    for nasty in [
        "(".repeat(200_000),
        "<".repeat(200_000),
        "[".repeat(200_000),
        format!("A: {}", "[x](".repeat(50_000)),
    ] {
        let _ = timed(Duration::from_secs(2), || parse(&nasty));
    }
    let json: String = format!(
        "[{}]",
        vec![r#"{"speaker":"A","text":"hi"}"#; 20_000].join(",")
    );
    let e = timed(Duration::from_secs(2), || parse(&json)).unwrap();
    assert_eq!(e.lines[19_999].position.column, 2 + 19_999 * 28);
}

#[test]
fn json_after_front_matter_and_late_cast_blocks() {
    let text = "---\ncast:\n  A: af_sky\n---\n[{\"speaker\": \"A\", \"text\": \"hi\"}]";
    for format in [None, Some(ScriptFormat::Json)] {
        let e = with(
            ParseOptions {
                format,
                ..ParseOptions::default()
            },
            text,
        )
        .unwrap();
        assert_eq!(e.format, ScriptFormat::Json);
        assert_eq!(e.cast.get("A").unwrap().voice, "af_sky");
        assert_eq!(e.lines[0].position, Position::new(5, 2));
    }
    let md = parse("# Show\n\n## Cast\nAlice: af_heart\n\n**Alice:** Hi.").unwrap();
    assert!(
        md.warnings
            .iter()
            .any(|w| w.message.starts_with("a cast block only counts")),
        "{:?}",
        md.warnings
    );
}

#[test]
fn a_name_with_and_without_its_article_is_one_speaker_with_a_notice() {
    let ep = parse(
        "A NEIGHBOUR: Is anyone home?\nMAYA: Just me.\nTHE NEIGHBOUR: I heard a crash.\nHost: Welcome.\nThe host: Back again.\n",
    )
    .expect("parses");
    let names: Vec<&str> = ep.cast.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["A NEIGHBOUR", "MAYA", "Host"]);
    assert_eq!(ep.lines[2].speaker, "A NEIGHBOUR");
    let notices: Vec<&str> = ep
        .warnings
        .iter()
        .filter(|w| w.message.contains("leading article"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(notices.len(), 2, "{:?}", ep.warnings);
    assert!(notices[0].contains("`THE NEIGHBOUR` is taken as `A NEIGHBOUR`"));
}

#[test]
fn parentheses_written_as_directions_are_directions_in_every_layout_and_said_so() {
    let text = include_str!("../../tests/fidelity/46-parenthetical-directions.txt");
    let ep = parse(text).expect("parses");
    let verdict: Vec<&Warning> = ep
        .warnings
        .iter()
        .filter(|w| w.message.contains("read as stage directions"))
        .collect();
    assert_eq!(verdict.len(), 1, "{:?}", ep.warnings);
    assert_eq!(verdict[0].position.line, 2, "the first clear case is named");
    let spoken: Vec<String> = ep.lines.iter().map(|l| ep.spoken_text(l)).collect();
    assert_eq!(spoken[1], "So where were we?");
    assert_eq!(spoken[4], "I'll be right back. Sorry.");
    // The clause inside the council's sentence is still speech, and said to be.
    let aloud: Vec<usize> = ep
        .warnings
        .iter()
        .filter(|w| w.message.contains("is read aloud"))
        .map(|w| w.position.line)
        .collect();
    assert_eq!(aloud, [8]);

    // A podcast whose parentheses are asides keeps them as speech, each long one noticed.
    let asides = "Lena: The launch slipped to spring (which, as anyone who follows these things knows, means summer).\nMarcus: (laughing) As always.\n";
    let ep = parse(asides).expect("parses");
    assert!(!ep
        .warnings
        .iter()
        .any(|w| w.message.contains("read as stage directions")));
    assert!(ep.spoken_text(&ep.lines[0]).contains("(which, as anyone"));
    assert_eq!(ep.spoken_text(&ep.lines[1]), "As always.");
    assert!(ep
        .warnings
        .iter()
        .any(|w| w.position.line == 1 && w.message.contains("(10 words) is read aloud")));
}

mod cues;
mod layouts;

#[test]
fn a_speaker_heard_once_whose_name_is_a_slip_from_another_is_said_where() {
    let ep = parse(
        "HOST: Welcome back.\nGUEST: Thanks.\nHots: And then?\nGUEST: Then fans.\nHOST: Bye.\nGeust: Bye!\n",
    )
    .expect("parses");
    let slips: Vec<(usize, &str)> = ep
        .warnings
        .iter()
        .filter(|w| w.message.contains("one slip from"))
        .map(|w| (w.position.line, w.message.as_str()))
        .collect();
    assert_eq!(slips.len(), 2, "{:?}", ep.warnings);
    assert_eq!(slips[0].0, 3);
    assert!(slips[0].1.contains("`Hots` speaks only here") && slips[0].1.contains("`HOST`"));
    assert_eq!(slips[1].0, 6);
    assert!(slips[1].1.contains("`GUEST`"));
    // Names one letter apart that are meant: both heard more than once, a short name
    // mistyped (Mark and Mary), or a name the cast lists.
    for text in [
        "Ann: Hi.\nAnne: Hello.\nAnn: Well.\nAnne: Yes.\n",
        "Mark: Hi.\nMary: Hello.\nMark: Well.\n",
        "---\ncast:\n  Hots: af_bella\n---\nHOST: Hi.\nHots: Hello.\nHOST: Well.\n",
    ] {
        let ep = parse(text).expect("parses");
        assert!(
            !ep.warnings
                .iter()
                .any(|w| w.message.contains("one slip from")),
            "{text:?}: {:?}",
            ep.warnings
        );
    }
}

#[test]
fn a_label_with_a_bracketed_name_is_that_speaker() {
    // Chat assistants write `**Host 1 (Alex):**` once and `**Alex:**` after: two voices for one
    // person.
    let ep = parse(
        "**Host 1 (Alex):** Welcome.\n\n**Host 2 (Jamie):** Hi.\n\n**Alex:** So.\n\n**Jamie:** Well.\n\nDr. Reyes (guest): Hello.\nDr. Reyes: Thanks.\nALEX (whispering): Quiet.\n",
    )
    .expect("parses");
    let speakers: Vec<&str> = ep.lines.iter().map(|l| l.speaker.as_str()).collect();
    assert_eq!(
        speakers,
        [
            "Alex",
            "Jamie",
            "Alex",
            "Jamie",
            "Dr. Reyes",
            "Dr. Reyes",
            "Alex"
        ]
    );
    assert_eq!(ep.cast.members.len(), 3, "{:?}", ep.cast.members);
    let taken: Vec<usize> = ep
        .warnings
        .iter()
        .filter(|w| w.message.contains("is taken as"))
        .map(|w| w.position.line)
        .collect();
    assert_eq!(taken, [1, 3, 9, 11]);
    // Alone, a bracketed label is a name of its own.
    let ep = parse("Host 1 (Alex): Hi.\nHost 2 (Jamie): Hello.\n").expect("parses");
    assert_eq!(ep.lines[0].speaker, "Host 1 (Alex)");
    assert!(ep.warnings.is_empty(), "{:?}", ep.warnings);
}
