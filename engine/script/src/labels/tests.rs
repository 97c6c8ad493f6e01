//! The label, name and heading recognisers against the cases that decided their rules.

use super::*;
use crate::source::split_lines;

fn label(s: &str) -> Option<&str> {
    plain_label(s, &KnownNames::default()).map(|l| l.name)
}

#[test]
fn labels_versus_sentences() {
    assert_eq!(label("Alice: Hello"), Some("Alice"));
    assert_eq!(
        label("  Dr. Jane van Helsing: Hi"),
        Some("Dr. Jane van Helsing")
    );
    assert_eq!(label("Speaker 1: Hi"), Some("Speaker 1"));
    assert_eq!(label("🎙️ Host: Hi"), Some("🎙️ Host"));
    assert_eq!(label("أحمد: مرحبا"), Some("أحمد"));
    assert_eq!(label("小明：你好"), Some("小明"));
    assert_eq!(label("Bob:"), Some("Bob"));
    assert_eq!(label("He said this: it was fine"), None);
    assert_eq!(label("At 10:30 we met"), None);
    assert_eq!(label("See https://example.invalid"), None);
    assert_eq!(label("Wait, what: no"), None);
    assert_eq!(label("(laughs): no"), None);
    assert_eq!(label("alice: hi"), None);
    let l = plain_label("  Bob:   hi", &KnownNames::default()).unwrap();
    assert_eq!((l.name_at, l.rest_at), (2, 6));
}

#[test]
fn frequent_lower_case_labels_and_cast_names_are_known() {
    let text = "alice: hi\nbob: yo\nalice: so\nbob: ok\nalice: bye\n";
    let lines = split_lines(text);
    let known = KnownNames::new([], &lines);
    assert_eq!(
        plain_label("alice: x", &known).map(|l| l.name),
        Some("alice")
    );
    assert_eq!(plain_label("bob: x", &known), None, "only twice");
    let known = KnownNames::new(["Bob"], &lines);
    assert!(plain_label("bob: x", &known).is_some());
}

#[test]
fn bold_labels() {
    let l = bold_label("**Alice:** Hello").unwrap();
    assert_eq!((l.name, l.name_at, l.rest_at), ("Alice", 2, 10));
    assert_eq!(bold_label("**Bob**: Hi").map(|l| l.name), Some("Bob"));
    assert_eq!(bold_label("__Ann:__ Hi").map(|l| l.name), Some("Ann"));
    assert_eq!(bold_label("**Important** news"), None);
    assert_eq!(bold_label("* list item: x"), None);
}

#[test]
fn dia_tags_and_headings() {
    assert_eq!(dia_tag("x [S12] y", 2), Some(("12", 5)));
    assert_eq!(dia_tag("[s1]", 0), Some(("1", 4)));
    assert_eq!(dia_tag("[S] [Sx] [S1", 0), None);
    assert_eq!(markdown_heading("## Part two ##"), Some("Part two"));
    assert_eq!(markdown_heading("#hashtag"), None);
    assert_eq!(markdown_heading("####### seven"), None);
}

#[test]
fn play_names_and_scene_headings() {
    let n = |s, t| play_name(s, t).map(|p| p.name);
    assert_eq!(n("ALGERNON.", false), Some("ALGERNON"));
    assert_eq!(n("LADY BRACKNELL", false), Some("LADY BRACKNELL"));
    assert_eq!(n("JOHN (V.O.)", false), Some("JOHN"));
    assert_eq!(n("Lady Bracknell.", true), Some("Lady Bracknell"));
    assert_eq!(n("Lady Bracknell.", false), None);
    assert_eq!(n("Yes, sir.", true), None);
    assert_eq!(n("THE END", false), None);
    assert_eq!(n("THE IMPORTANCE OF BEING EARNEST", false), None);
    let none = KnownNames::default();
    assert_eq!(
        play_same_line_name("LANE. Yes, sir.", &none),
        Some(("LANE", 6))
    );
    assert_eq!(
        play_same_line_name("MR. WORTHING. Quite.", &none),
        Some(("MR. WORTHING", 14))
    );
    assert_eq!(
        play_same_line_name("HENRIETTA MARLOWE. I … I suppose so.", &none),
        Some(("HENRIETTA MARLOWE", 19))
    );
    assert_eq!(play_same_line_name("Lane. Yes.", &none), None);
    assert_eq!(
        bracket_candidate("THE AUNT [at the window] It rains."),
        Some(("THE AUNT", 9))
    );
    assert_eq!(
        bracket_candidate("The aunt [at the window] It rains."),
        None
    );
    assert_eq!(dash_candidate("MAYA — We're live."), Some(("MAYA", 9)));
    assert_eq!(dash_candidate("well-known - fact"), None);
    for h in [
        "INT. KITCHEN - DAY",
        "ACT I",
        "Scene 2",
        "SCENE: Morning-room in Half-Moon Street.",
        "FIRST ACT",
    ] {
        assert!(scene_heading(h), "{h}");
    }
    for h in [
        "Interior decorating is hard work for us all",
        "ALGERNON.",
        "The act of reading is a joy to me",
    ] {
        assert!(!scene_heading(h), "{h}");
    }
}

#[test]
fn chat_stamps_are_dates_with_times_before_a_name() {
    let len = |s: &str| timestamp_len(s);
    assert_eq!(len("[12/03/2024, 10:32:05] Alex: hi"), 23);
    assert_eq!(len("12/03/2024, 10:32 - Alex: hi"), 20);
    assert_eq!(len("3/12/24, 9:05\u{202f}PM - Alex: hi"), 21);
    assert_eq!(len("[10:32, 12/03/2024] Alex: hi"), 20);
    assert_eq!(len("2024-03-12 10:32:05 Alex: hi"), 20);
    // A date alone, a sentence after a date, a ratio: not a chat's stamp.
    assert_eq!(len("12/03/2024 was the day"), 0);
    assert_eq!(len("1/2, 3:4 - x"), 0);
    assert_eq!(
        without_timestamp("Alex Chen — Today at 10:32 AM"),
        "Alex Chen"
    );
    assert_eq!(without_timestamp("Alex — 12/03/2024 10:32 AM"), "Alex");
    assert_eq!(without_timestamp("Alex — the best"), "Alex — the best");
}
