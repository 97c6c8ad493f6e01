//! Words spelled alike and said differently, where espeak picks the wrong one and the words
//! around them say which is meant: "I used to think" (/juːst/, not /juːzd/), "she read it"
//! (/ɹɛd/), "let's record" (the verb's stress), "close the door" (/kloʊz/), "wind down"
//! (/waɪnd/), "tear it apart" (/tɛɹ/), "she dove into" (/doʊv/), "lead poisoning" (/lɛd/),
//! "take a bow" (/baʊ/).
//!
//! espeak already takes the verb after "to", a pronoun or a modal ("we record", "to close"),
//! and the past after "have" or "was" ("I've read"); these rules cover the contexts it misses,
//! each by a respelling espeak says the right way ("red", "cloze", "yoost"). Captions and word
//! timing keep the author's word: the respelling is only what is read.

use super::rules::{keep_case, Ctx, Hit};

/// Verbs whose noun is said differently, and a spelling espeak reads as the verb.
const VERBS: &[(&str, &str)] = &[
    ("record", "rekord"),
    ("present", "prezent"),
    ("object", "objekt"),
    ("update", "up-date"),
    ("increase", "inkrease"),
    ("export", "expport"),
    ("import", "impport"),
    ("close", "cloze"),
    ("wind", "wined"),
    ("tear", "tare"),
    ("separate", "separayt"),
];

/// Words after which the next word is a verb, and espeak does not know it.
const BEFORE_VERB: &[&str] = &["let's", "lets", "let’s", "please"];

/// What may follow a verb that opens a command ("Close the door", "Wind it up").
const OBJECTS: &[&str] = &[
    "the",
    "it",
    "this",
    "that",
    "them",
    "your",
    "my",
    "our",
    "his",
    "her",
    "their",
    "a",
    "an",
    "all",
    "up",
    "down",
    "out",
    "off",
    "everything",
];

/// Words for "be" and "get", after which "used to" is a passive ("it was used to build").
const BE: &[&str] = &[
    "be", "been", "being", "is", "are", "was", "were", "am", "get", "gets", "got", "getting",
];

/// Words that cannot follow "to" as a verb: "used to it" is being accustomed.
const NOT_VERBS: &[&str] = &[
    "it", "this", "that", "these", "those", "the", "a", "an", "them", "him", "her", "me", "us",
    "you", "my", "your", "his", "our", "their", "its", "such", "all",
];

/// Token `i` respelled, when its neighbours say which of its readings is meant.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    // Nearly every word is none of these: tell that before looking at its neighbours.
    let known = |w: &str| core.eq_ignore_ascii_case(w);
    let ours = ["used", "read", "lead", "dove", "bow", "tear"]
        .into_iter()
        .any(known)
        || VERBS.iter().any(|(w, _)| known(w));
    if !ours {
        return None;
    }
    let lower = core.to_lowercase();
    let prev = ctx.prev_core(i).map(str::to_lowercase);
    let next = ctx.next_core(i).map(str::to_lowercase);
    let said = match lower.as_str() {
        "used" => used_to(ctx, i, prev.as_deref(), next.as_deref()),
        "read" => past_read(ctx, i, prev.as_deref()),
        "lead" => lead_metal(next.as_deref()),
        "dove" => dove_past(prev.as_deref(), next.as_deref()),
        "bow" => bow_bend(ctx, i, prev.as_deref(), next.as_deref()),
        "tear" => tear_verb(prev.as_deref(), next.as_deref()),
        _ => None,
    }
    .or_else(|| verb(ctx, i, &lower, prev.as_deref(), next.as_deref()))?;
    Some(Hit::new(1, keep_case(core, said)))
}

/// "Let's record", "Please close it", "Close the door": the verb, which espeak took for the
/// noun or adjective.
fn verb(
    ctx: &Ctx<'_>,
    i: usize,
    word: &str,
    prev: Option<&str>,
    next: Option<&str>,
) -> Option<&'static str> {
    let (_, said) = VERBS.iter().find(|(w, _)| *w == word)?;
    let after_let = prev.is_some_and(|p| BEFORE_VERB.contains(&p));
    // A command opens the sentence with an object after it ("Close the door", but "Close
    // friends", "Record sales").
    let command = i == 0 && ctx.toks.len() > 1 && next.is_some_and(|n| OBJECTS.contains(&n));
    (after_let || command).then_some(*said)
}

/// "I used to think", "My dad used to say", "I'm used to it": /juːst/. A passive keeps
/// /juːzd/ ("it was used to build", "the tools used to train it"), so the habit needs a subject
/// that does things before it (or nothing: "Used to be").
fn used_to(
    ctx: &Ctx<'_>,
    i: usize,
    prev: Option<&str>,
    next: Option<&str>,
) -> Option<&'static str> {
    const SUBJECTS: &[&str] = &[
        "i",
        "you",
        "we",
        "they",
        "he",
        "she",
        "it",
        "who",
        "that",
        "this",
        "there",
        "which",
        "what",
        "everyone",
        "everybody",
        "people",
        "folks",
        "things",
        "dad",
        "mom",
        "mum",
        "father",
        "mother",
        "parents",
        "grandma",
        "grandpa",
        "grandmother",
        "grandfather",
        "kids",
        "never",
        "always",
        "just",
        "also",
        "once",
        "still",
        "really",
    ];
    if next != Some("to") {
        return None;
    }
    let after_to = ctx.next_core(i + 1).map(str::to_lowercase);
    let be = prev.is_some_and(|p| {
        BE.contains(&p)
            || ["'s", "'re", "'m", "’s", "’re", "’m"]
                .iter()
                .any(|s| p.ends_with(s))
    });
    let accustomed = be
        && after_to
            .as_deref()
            .is_some_and(|w| NOT_VERBS.contains(&w) || w.ends_with("ing") && w.len() > 4);
    let habit = !be && prev.is_none_or(|p| SUBJECTS.contains(&p));
    (habit || accustomed).then_some("yoost")
}

/// "She read it", "I read it last week": the past, which espeak says as the present unless
/// "have" or "was" comes before.
fn past_read(ctx: &Ctx<'_>, i: usize, prev: Option<&str>) -> Option<&'static str> {
    const PRESENT_BEFORE: &[&str] = &[
        "did",
        "didn't",
        "does",
        "doesn't",
        "do",
        "don't",
        "will",
        "would",
        "could",
        "should",
        "can",
        "can't",
        "might",
        "must",
        "may",
        "to",
        "let",
        "let's",
        "won't",
        "wouldn't",
        "couldn't",
        "shouldn't",
    ];
    const PAST_MARKS: &[&str] = &["yesterday", "ago", "last", "earlier", "once"];
    let prev = prev?;
    let before = i
        .checked_sub(1)
        .and_then(|k| ctx.prev_core(k))
        .map(str::to_lowercase);
    if before
        .as_deref()
        .is_some_and(|b| PRESENT_BEFORE.contains(&b))
    {
        return None;
    }
    // "he reads" is the present: "he read" can only be the past.
    let third_person = matches!(prev, "he" | "she" | "it");
    let marked = matches!(prev, "i" | "you" | "we" | "they")
        && ctx.toks[i + 1..]
            .iter()
            .any(|t| PAST_MARKS.contains(&t.core.to_lowercase().as_str()));
    (third_person || marked).then_some("red")
}

/// "lead poisoning", "lead pipes": the metal.
fn lead_metal(next: Option<&str>) -> Option<&'static str> {
    const METAL: &[&str] = &[
        "poisoning",
        "pipe",
        "pipes",
        "paint",
        "exposure",
        "contamination",
        "levels",
        "pencil",
        "pencils",
        "acid",
        "shot",
        "weights",
        "bullet",
        "bullets",
        "crystal",
    ];
    next.is_some_and(|n| METAL.contains(&n)).then_some("led")
}

/// "She dove into the pool": the past of dive, not the bird ("a dove in the garden").
fn dove_past(prev: Option<&str>, next: Option<&str>) -> Option<&'static str> {
    const AFTER: &[&str] = &[
        "into",
        "in",
        "headfirst",
        "under",
        "deep",
        "straight",
        "right",
        "off",
    ];
    let bird = prev.is_some_and(|p| matches!(p, "the" | "a" | "white" | "peace" | "turtle"));
    (!bird && next.is_some_and(|n| AFTER.contains(&n))).then_some("dohv")
}

/// "take a bow", "bow out", "bow down": bending, not the ribbon or the weapon.
fn bow_bend(
    ctx: &Ctx<'_>,
    i: usize,
    prev: Option<&str>,
    next: Option<&str>,
) -> Option<&'static str> {
    let taken = prev == Some("a")
        && ctx.word_before(i, 2..=2, &["take", "took", "taking", "takes", "taken"]);
    let verb = next.is_some_and(|n| matches!(n, "out" | "down" | "to" | "before"))
        && !prev.is_some_and(|p| matches!(p, "the" | "a" | "his" | "her" | "my"));
    (taken || verb).then_some("bough")
}

/// "tear it apart", "tear open the box": pulling, not crying.
fn tear_verb(prev: Option<&str>, next: Option<&str>) -> Option<&'static str> {
    const AFTER: &[&str] = &[
        "apart", "open", "off", "into", "through", "it", "them", "away",
    ];
    let noun = prev.is_some_and(|p| matches!(p, "a" | "the" | "single" | "one" | "no"));
    (!noun && next.is_some_and(|n| AFTER.contains(&n))).then_some("tare")
}
