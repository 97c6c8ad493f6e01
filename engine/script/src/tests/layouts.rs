//! The odd real-world layouts that once lost or invented lines, each read as a reader would.

use crate::{Episode, LineKind, ParseOptions, ScriptFormat};

fn parse(text: &str) -> Episode {
    Episode::parse("ep.txt", text, &ParseOptions::default()).unwrap()
}

fn said(e: &Episode) -> Vec<(String, String)> {
    e.lines
        .iter()
        .map(|l| (l.speaker.clone(), e.spoken_text(l)))
        .collect()
}

/// Each unspoken line with its kind.
fn kinds(e: &Episode) -> Vec<(usize, LineKind)> {
    e.skipped
        .iter()
        .map(|s| (s.position.line, s.kind))
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
fn a_mark_glued_to_a_number_ends_a_turn_as_speech() {
    // "(k)" at the end of a turn was dropped as a direction: "my four oh one".
    let e = parse("Host: Max out your 401(k)\nGuest: Under Rule 12(b)(6) (laughs)\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Host", "Max out your 401(k)"),
            ("Guest", "Under Rule 12(b)(6)")
        ])
    );
}

#[test]
fn every_unspoken_line_has_its_kind() {
    let e = parse(
        "THE IMPORTANCE OF BEING EARNEST\n\nFIRST ACT\n\n[Lane is arranging tea.]\n\nAlgernon enters, reading.\nHe sits.\n\nALGERNON. Did you hear, Lane?\n\nLANE. Yes, sir.\n",
    );
    assert_eq!(
        kinds(&e),
        [
            (1, LineKind::Metadata),
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
        "Bob [off] — but nobody hears this\n\nAlice: Hi.\nBob: Hello.\n",
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

#[test]
fn transcript_timestamps_are_not_part_of_names_or_speech() {
    let e = parse("[00:00:02] Priya: Okay, we're live.\n[00:00:06] Tom: Forty-one!\nPriya (00:00:09): Ten, you said.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Priya", "Okay, we're live."),
            ("Tom", "Forty-one!"),
            ("Priya", "Ten, you said."),
        ])
    );
    let e = parse("Sarah Chen  0:00\nWelcome back.\n\nMarcus Webb  0:07\nThanks, Sarah.\n\nSarah Chen  0:09\nSo.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Sarah Chen", "Welcome back."),
            ("Marcus Webb", "Thanks, Sarah."),
            ("Sarah Chen", "So."),
        ])
    );
}

#[test]
fn whatsapp_exports_keep_the_messages_and_nothing_else() {
    let android = parse(
        "12/03/2024, 10:30 - Messages and calls are end-to-end encrypted. Tap to learn more.\n\
         12/03/2024, 10:32 - Alex: are you coming tonight?\n\
         12/03/2024, 10:33 - Sam: <Media omitted>\n\
         12/03/2024, 10:33 - Sam: yes, at 8\nand I'll bring the cake <This message was edited>\n\
         12/03/2024, 10:34 - Sam left\n\
         3/12/24, 10:35\u{202f}PM - Alex: This message was deleted\n\
         3/12/24, 10:36 PM - Alex: see you <This message was edited>\n",
    );
    assert_eq!(
        said(&android),
        pairs(&[
            ("Alex", "are you coming tonight?"),
            ("Sam", "yes, at 8 and I'll bring the cake"),
            ("Alex", "see you")
        ])
    );
    assert_eq!(
        kinds(&android),
        [
            (1, LineKind::Metadata),
            (3, LineKind::Direction),
            (6, LineKind::Metadata),
            (7, LineKind::Direction)
        ]
    );
    assert!(
        warned_at(&android, 1) && warned_at(&android, 3),
        "{:?}",
        android.warnings
    );
    let iphone = parse(
        "[12/03/2024, 10:32:05] Alex: are you coming tonight?\n\
         [12/03/2024, 10:33:10] Sam: \u{200e}image omitted\n\
         [12.03.24, 10:33:40] Sam: yes!\n\
         [10:34, 12/03/2024] Alex: \u{200e}<attached: 00000012-PHOTO-2024-03-12-10-34-00.jpg>\n",
    );
    assert_eq!(
        said(&iphone),
        pairs(&[("Alex", "are you coming tonight?"), ("Sam", "yes!")])
    );
    // Outside a chat's stamps the same words are speech, as a drama may write them, and so is
    // a line that starts with a date and a time.
    let drama = parse(
        "Alex: This message was deleted\nSam: Media omitted, it says.\n\
         12/03/2024, 10:32 - that was when it started.\n",
    );
    assert_eq!(drama.lines.len(), 2);
    assert!(drama
        .spoken_text(&drama.lines[1])
        .ends_with("that was when it started."));
}

#[test]
fn chat_and_meeting_transcripts_with_clock_times() {
    let expected = pairs(&[
        ("Alex Chen", "Hey, welcome back."),
        ("Sam Patel", "Thanks for having me!"),
        ("Alex Chen", "Let us begin."),
    ]);
    // Slack, copied: the name, two spaces and the time of day, the message below.
    let slack = parse(
        "Alex Chen  10:32 AM\nHey, welcome back.\nSam Patel  10:33 PM\nThanks for having me!\n\
         Alex Chen  10:34am\nLet us begin.\n",
    );
    assert_eq!(said(&slack), expected);
    // Zoom's transcript: the name in brackets, then the time.
    let zoom = parse(
        "[Alex Chen] 10:32:05\nHey, welcome back.\n\n[Sam Patel] 10:32:09\nThanks for having me!\n\n\
         [Alex Chen] 10:32:15\nLet us begin.\n",
    );
    assert_eq!(said(&zoom), expected);
    // Discord, copied: the name, a dash and the day and time, the message below.
    let discord = parse(
        "Alex Chen — Today at 10:32 AM\nHey, welcome back.\nSam Patel — Yesterday at 9:05 PM\n\
         Thanks for having me!\nAlex Chen — 12/03/2024 10:34 AM\nLet us begin.\n",
    );
    assert_eq!(said(&discord), expected);
    // A bracketed direction without a time is still a direction, and Sam is not a time.
    let chat = parse("Alex: Hi.\n[Sam enters]\nSam: Hello, Pam.\n");
    assert_eq!(
        said(&chat),
        pairs(&[("Alex", "Hi."), ("Sam", "Hello, Pam.")])
    );
}

#[test]
fn fountain_screenplays_keep_every_speech_and_drop_the_writers_notes() {
    // Dual dialogue (`MARCUS ^`) and a forced name (`@McCLANE`) were action, their speech
    // unspoken; the boneyard's cut scene was spoken; a section was narration.
    let e = parse(
        "Title: Night Shift\n\n# ACT ONE\n\n= Sarah meets Marcus.\n\nINT. STUDIO - NIGHT\n\n\
         SARAH\nWelcome back.\n\nMARCUS ^\nLong story.\n\n/* An old scene\nSARAH\nCut this.\n*/\n\n\
         @McCLANE\nYippee ki-yay.\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("SARAH", "Welcome back."),
            ("MARCUS", "Long story."),
            ("McCLANE", "Yippee ki-yay."),
        ])
    );
    let titles: Vec<&str> = e.chapters.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["ACT ONE", "INT. STUDIO - NIGHT"]);
    let comments: Vec<usize> = kinds(&e)
        .into_iter()
        .filter(|(_, k)| *k == LineKind::Comment)
        .map(|(line, _)| line)
        .collect();
    assert_eq!(comments, [5, 15, 16, 17, 18]);
}

#[test]
fn an_interviews_q_and_a_are_speakers() {
    let e = parse("Q. What brought you here?\nA. A long story.\nQ. Tell me.\nA. Fine.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Q", "What brought you here?"),
            ("A", "A long story."),
            ("Q", "Tell me."),
            ("A", "Fine."),
        ])
    );
    // Without questions, `A.` is an initial.
    let e = parse("LANE. Yes, sir.\nALGERNON. Hm.\nA. Lincoln said so.\nLANE. Quite.\n");
    assert_eq!(e.lines[1].speaker, "ALGERNON");
    assert_eq!(e.spoken_text(&e.lines[1]), "Hm. A. Lincoln said so.");
}

#[test]
fn two_column_tables_are_turns() {
    // A spreadsheet saved as TSV, or a Word table: speaker, tab, line; the header row and a
    // speaker heard once (the script was refused, or Bob's row was read into Alice's turn).
    let e = parse(
        "Speaker\tLine\nAlice\tHello there.\nBob\tThanks for having me.\nAlice\tLet us start.\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("Alice", "Hello there."),
            ("Bob", "Thanks for having me."),
            ("Alice", "Let us start."),
        ])
    );
    assert_eq!(kinds(&e), [(1, LineKind::Metadata)]);
    // A table under a turn: its header row is not the turn's last words.
    let e = parse("MAYA: Welcome.\nTOM: Thanks.\nSpeaker\tLine\nMAYA\tSo, the market?\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("MAYA", "Welcome."),
            ("TOM", "Thanks."),
            ("MAYA", "So, the market?")
        ])
    );
    assert_eq!(kinds(&e), [(3, LineKind::Metadata)]);
    // The same sheet saved as CSV, a cell quoted over two lines.
    let csv = b"Speaker,Line\r\nAlice,\"Hello, there.\"\r\nBob,\"Thanks\nfor having me.\"\r\n";
    let e = Episode::parse_bytes("ep.csv", csv, &ParseOptions::default()).expect("a CSV script");
    assert_eq!(
        said(&e),
        pairs(&[("Alice", "Hello, there."), ("Bob", "Thanks for having me.")])
    );
    let e = Episode::parse_bytes("ep.csv", b"Ann,\"Hi\nBob,Yo\n", &ParseOptions::default())
        .expect_err("an open quote");
    assert!(e.to_string().starts_with("ep.csv:1:1: "), "{e}");
}

#[test]
fn footnote_definitions_are_not_spoken() {
    // Show notes' `[1]: …` under the last turn was read as ": Show notes at …".
    let e = parse("HOST: See the notes.[1]\nGUEST: And mine.[^a]\n[1]: Show notes at example.com\n[^a]: Mine.\n");
    assert_eq!(
        said(&e),
        pairs(&[("HOST", "See the notes."), ("GUEST", "And mine.")])
    );
    assert_eq!(kinds(&e), [(3, LineKind::Comment), (4, LineKind::Comment)]);
}

#[test]
fn quote_markers_are_never_spoken() {
    // A lone `>` between quoted turns was read as "greater than".
    let e = parse("> **Alice:** Hello there.\n>\n> **Bob:** Hi, Alice.\n> Good to see you.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Alice", "Hello there."),
            ("Bob", "Hi, Alice. Good to see you.")
        ])
    );
}

#[test]
fn otter_transcripts_in_every_shape_are_turns() {
    // Otter's unnamed voices, names heard once, no blank lines between turns, the stamp before
    // the name (Descript): the stamped
    // name line is always a speaker (it was the title, or the first turn was narration, or
    // every later stamp was read aloud inside the first turn).
    for text in [
        "Speaker 1  0:00\nWelcome back.\n\nSpeaker 2  0:07\nThanks.\n",
        "Speaker 1 00:00:01\nWelcome back.\nSpeaker 2 00:00:05\nThanks.\n",
        "[00:00:00] Speaker 1\nWelcome back.\n\n[00:00:04] Speaker 2\nThanks.\n",
    ] {
        let e = parse(text);
        assert_eq!(
            said(&e),
            pairs(&[("Speaker 1", "Welcome back."), ("Speaker 2", "Thanks.")]),
            "{text:?}"
        );
    }
    // A paragraph without a name goes on with the speaker above; the service's credit at the
    // end is not speech.
    let e = parse("Alice  0:00\nWelcome.\n\nBob  0:07\nA story.\n\nIt began in Rome.\n\nAlice  0:40\nGo on.\n\nTranscribed by https://otter.ai\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("Alice", "Welcome."),
            ("Bob", "A story. It began in Rome."),
            ("Alice", "Go on."),
        ])
    );
    assert_eq!(kinds(&e), [(12, LineKind::Narration)]);
}

#[test]
fn sound_cues_and_numbered_headings_are_not_speakers() {
    let e = parse("Episode 3: Fog\n\nSFX: Waves on rocks.\nTAM: Up the stair!\nMUSIC: Sting.\nELSPETH: I did.\nSFX: A door bangs. Footsteps.\n");
    assert_eq!(
        said(&e),
        pairs(&[("TAM", "Up the stair!"), ("ELSPETH", "I did.")])
    );
    assert_eq!(e.chapters[0].title, "Episode 3: Fog");
    assert_eq!(
        kinds(&e),
        [
            (1, LineKind::Heading),
            (3, LineKind::Direction),
            (5, LineKind::Direction),
            (7, LineKind::Direction)
        ]
    );
    let notices: Vec<&str> = e.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        notices
            .iter()
            .any(|m| m.starts_with("`SFX:` lines (3, 7) are read as sound cues")),
        "{notices:?}"
    );
    // Not also told to write `SFX: …`, as it already is.
    assert!(
        !notices.iter().any(|m| m.contains("starts like a turn")),
        "{notices:?}"
    );
}

#[test]
fn play_e_texts_of_the_gutenberg_kind() {
    // Wilde's title-case names with two spaces, Synge's `NAME (direction).--speech`, a cast
    // list, a title block, and a clause in parentheses before the full stop
    let e = parse("RIDERS TO THE SEA\n\nPERSONS IN THE PLAY\n\nMAURYA (an old woman)\nNORA (her daughter)\n\nNORA (in a low voice).--Where is she?\n\nMAURYA.--Lying down (about an hour ago).\n\nNORA.--(Then, quietly) Good.\n");
    assert_eq!(
        said(&e),
        pairs(&[
            ("NORA", "Where is she?"),
            ("MAURYA", "Lying down (about an hour ago)."),
            ("NORA", "Good."),
        ])
    );
    let kinds: Vec<LineKind> = e.skipped.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [LineKind::Metadata; 4]);
    let e = parse("Algernon.  Did you hear, Lane?\n\nLane.  I didn't think it polite to listen, sir.\n\nAlgernon.  I'm sorry.\n\nLane.  Yes, sir.\n\nAlgernon.  Good.\n\nLane.  Mr. Ernest Worthing.\n");
    let speakers: Vec<String> = said(&e).into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        speakers,
        ["Algernon", "Lane", "Algernon", "Lane", "Algernon", "Lane"]
    );
    assert_eq!(e.spoken_text(&e.lines[5]), "Mr. Ernest Worthing.");
}

#[test]
fn a_bold_name_without_its_colon_inside_a_turn_is_warned() {
    // Markdown joins the line to the paragraph before, so Ana says Ben's words: said, not lost.
    let e = Episode::parse(
        "ep.md",
        "**Ana:** Hello there.\n**Ben** Missing colon here.\n\n**Ben:** Hi.\n**Ana** is my friend, and __Ana__ too.\n",
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(e.lines.len(), 2);
    let warned: Vec<_> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("in bold without a colon"))
        .collect();
    assert_eq!(warned.len(), 2, "{:?}", e.warnings);
    assert_eq!((warned[0].position.line, warned[0].position.column), (2, 3));
    assert!(warned[0].message.contains("`Ben`") && warned[0].message.contains("`Ana`'s turn"));
    assert_eq!(warned[1].position.line, 5);
}

#[test]
fn an_episodes_details_at_the_top_are_not_spoken() {
    let e = parse(
        "Title: Night Market\nRuntime: ~35 min | Recorded: Nov 2, 2026\nGuest: Dev Patel\n\n\
         Maya: Welcome to Night Market.\nDev: Thanks for having me.\nMaya: Let us eat.\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("Maya", "Welcome to Night Market."),
            ("Dev", "Thanks for having me."),
            ("Maya", "Let us eat."),
        ])
    );
    assert_eq!(
        kinds(&e),
        [
            (1, LineKind::Metadata),
            (2, LineKind::Metadata),
            (3, LineKind::Metadata)
        ]
    );
    assert_eq!(e.settings.title.as_deref(), Some("Night Market"));
    assert!(warned_at(&e, 1), "{:?}", e.warnings);
    // A guest who opens the show with a sentence, and a host who speaks again, are speakers.
    let e = parse("Guest: Thanks for having me.\nHost: Welcome.\nHost: Shall we?\n");
    assert_eq!(said(&e).len(), 3);
    let e = parse("Host: Maya Chen\nGuest: Dev\nHost: Welcome, Dev.\nGuest: Hi.\n");
    assert_eq!(said(&e).len(), 4);
    // A script of nothing but a title keeps it: something must be said.
    let e = parse("Title: Hello there\n");
    assert_eq!(said(&e).len(), 1);
}

#[test]
fn production_cues_in_capitals_are_not_speakers() {
    let e = parse(
        "MAYA\nWelcome back.\n\nDEV\nThanks.\n\nAD BREAK\n\nMAYA\nWe're back.\n\nOUTRO MUSIC UP\n\nEND OF EPISODE\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("MAYA", "Welcome back."),
            ("DEV", "Thanks."),
            ("MAYA", "We're back."),
        ])
    );
    assert!(e.skipped.iter().all(|s| s.kind == LineKind::Direction));
}

#[test]
fn writers_notes_and_section_breaks_are_not_spoken() {
    let e = Episode::parse(
        "ep.md",
        "**JO:** It's two in the morning.\n\n> **Producer note:** trim this if we run long.\n\n\
         **SAM:** We're awake.\nTODO: check the date\n\n---\n\n*Sponsored by Acme.*\n\n**JO:** That's the show.\n",
        &ParseOptions::default(),
    )
    .expect("parsed");
    assert_eq!(
        said(&e),
        pairs(&[
            ("JO", "It's two in the morning."),
            ("SAM", "We're awake."),
            ("JO", "That's the show."),
        ])
    );
    assert_eq!(
        kinds(&e),
        [
            (3, LineKind::Comment),
            (6, LineKind::Comment),
            (8, LineKind::Comment),
            (10, LineKind::Narration),
        ]
    );
    assert!(warned_at(&e, 3) && warned_at(&e, 10), "{:?}", e.warnings);
}

#[test]
fn a_printed_screenplays_page_breaks_are_not_speech() {
    let pad = " ".repeat(50);
    let e = parse(&format!(
        "{pad}12.\n\nINT. KITCHEN - NIGHT\n\n          ALICE\n     Is something burning?\n\n          BOB (O.S.)\n     \
         Your career!\n          (MORE)\n{pad}(CONTINUED)\n{pad}13.\nCONTINUED:\n          BOB (CONT'D)\n     \
         Kidding.\n\n          ALICE\n     12.\n"
    ));
    assert_eq!(
        said(&e),
        pairs(&[
            ("ALICE", "Is something burning?"),
            ("BOB", "Your career!"),
            ("BOB", "Kidding."),
            // A number said at the margin of the speech is speech.
            ("ALICE", "12."),
        ])
    );
}

#[test]
fn a_character_list_is_not_spoken_and_casts_by_its_descriptions() {
    let e = parse(
        "THE LIGHTHOUSE\n\nCHARACTERS:\nSAM — the keeper's widow, 60s\nJO — a young fisherman\n\n\
         SAM: You came back.\nJO: I said I would.\nSAM: It never stopped.\n\nEND OF EPISODE\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("SAM", "You came back."),
            ("JO", "I said I would."),
            ("SAM", "It never stopped.")
        ])
    );
    assert!(kinds(&e).contains(&(4, LineKind::Metadata)));
    assert!(
        kinds(&e).contains(&(11, LineKind::Direction)),
        "{:?}",
        kinds(&e)
    );
    assert!(warned_at(&e, 3), "{:?}", e.warnings);
    // Sam and Jo are names of either gender: the descriptions decide.
    let sam = e.cast.get("SAM").unwrap();
    assert!(sam.voice.starts_with("af_"), "{sam:?}");
    assert_eq!(sam.guess.as_ref().map(|g| g.word.as_str()), Some("widow"));
    let jo = e.cast.get("JO").unwrap();
    assert!(jo.voice.starts_with("am_"), "{jo:?}");
    assert_eq!(
        jo.guess.as_ref().map(|g| g.word.as_str()),
        Some("fisherman")
    );
}

#[test]
fn names_in_square_brackets_are_speakers_and_bracketed_cues_are_not() {
    let e = parse(
        "[Music]\n[Alice] Welcome back to the show.\n[Bob] Thanks for having me. [laughs]\n\
         [Alice] Let us begin.\n[Applause]\n",
    );
    assert_eq!(
        said(&e),
        pairs(&[
            ("Alice", "Welcome back to the show."),
            ("Bob", "Thanks for having me."),
            ("Alice", "Let us begin.")
        ])
    );
    // How a line is said and a show's section before a label stay what they were.
    let e = parse(
        "ALICE: Hi.\n[Whispering] I know.\n[Whispering] Shh.\n[Softly] Go.\n\
         [Cold Open] BOB: Coffee is up.\nBOB: Again.\n",
    );
    let speakers: Vec<String> = said(&e).into_iter().map(|(who, _)| who).collect();
    assert_eq!(speakers, ["ALICE", "BOB", "BOB"], "{:?}", said(&e));
}

#[test]
fn lines_of_only_emoji_are_said_to_be_silent() {
    let e = parse("Alex: are you coming?\nSam: 👍\nAlex: 😂😂😂 [laughs]\nSam: ok 👍\n");
    assert_eq!(e.lines.len(), 4);
    let notice: Vec<&str> = e
        .warnings
        .iter()
        .filter(|w| w.message.contains("emoji"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(notice.len(), 1, "{:?}", e.warnings);
    assert!(
        notice[0].starts_with("line(s) 2, 3 say only"),
        "{}",
        notice[0]
    );
}
