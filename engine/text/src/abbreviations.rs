//! Abbreviations, initials and acronyms: "Dr.", "St.", "e.g.", "No. 5", "J. R. R.", "FBI".
//!
//! espeak knows a few abbreviations but reads most letter by letter or as nonsense words, and it
//! treats every full stop as a sentence end. Titles expand before a name ("Dr. Smith" is
//! "Doctor Smith"), street words after one ("Baker St." is "Baker Street"); reference words
//! expand before a number ("No. 5", "p. 7"). All-caps words of two to five letters are spelled
//! with hyphens ("F-B-I"), which espeak reads as one spelled word with natural stress (spaces
//! would make a lone "A" the article "uh"), unless they are acronyms said as words (NASA), look
//! like words at four or five letters ("TOTAL", left to espeak) or the whole sentence is
//! shouted. Acronyms inside hyphenated words are spelled too ("US-based" is "U-S-based").

use super::rules::{Ctx, Hit};
use super::Dialect;

/// Titles before a capitalised name, with or without a full stop.
const TITLES: &[(&str, &str)] = &[
    ("Mr", "Mister"),
    ("Mrs", "Missus"),
    ("Ms", "Miz"),
    ("Mx", "Mix"),
    ("Dr", "Doctor"),
    ("Prof", "Professor"),
    ("Rev", "Reverend"),
    ("Gen", "General"),
    ("Col", "Colonel"),
    ("Capt", "Captain"),
    ("Lt", "Lieutenant"),
    ("Sgt", "Sergeant"),
    ("Cpl", "Corporal"),
    ("Adm", "Admiral"),
    ("Maj", "Major"),
    ("Gov", "Governor"),
    ("Sen", "Senator"),
    ("Rep", "Representative"),
    ("Pres", "President"),
    ("Det", "Detective"),
    ("Insp", "Inspector"),
    ("Fr", "Father"),
    ("Pvt", "Private"),
    ("Cmdr", "Commander"),
    ("Brig", "Brigadier"),
    ("Supt", "Superintendent"),
    ("St", "Saint"),
    ("Mt", "Mount"),
    ("Ft", "Fort"),
];

/// Words after a name: "Baker St.", "Martin Luther King Jr.", "Acme Inc.".
const AFTER_NAME: &[(&str, &str)] = &[
    ("St", "Street"),
    ("Dr", "Drive"),
    ("Ave", "Avenue"),
    ("Rd", "Road"),
    ("Blvd", "Boulevard"),
    ("Ln", "Lane"),
    ("Hwy", "Highway"),
    ("Jr", "Junior"),
    ("Sr", "Senior"),
    ("Inc", "Incorporated"),
    ("Ltd", "Limited"),
    ("Corp", "Corporation"),
    ("Co", "Company"),
    ("Bros", "Brothers"),
];

/// Abbreviations written with a full stop, anywhere.
const GENERAL: &[(&str, &str)] = &[
    ("etc", "et cetera"),
    ("e.g", "for example"),
    ("i.e", "that is"),
    ("vs", "versus"),
    ("approx", "approximately"),
    ("Approx", "approximately"),
    ("est", "estimated"),
    ("co", "company"),
    ("dept", "department"),
    ("govt", "government"),
    ("misc", "miscellaneous"),
    ("cf", "compare"),
    ("viz", "namely"),
    ("esp", "especially"),
    ("incl", "including"),
    ("a.k.a", "also known as"),
    ("al", "al"),
    ("avg", "average"),
    ("ep", "episode"),
    ("wk", "week"),
    ("wks", "weeks"),
    ("feat", "featuring"),
    ("qtr", "quarter"),
    ("qtrs", "quarters"),
    ("mgmt", "management"),
    ("yr", "year"),
    ("yrs", "years"),
];

/// Shorthand from chat and notes, read as meant (lower or title case: "PLS" may be a name).
const SHORTHAND: &[(&str, &str)] = &[
    ("msg", "message"),
    ("msgs", "messages"),
    ("avg", "average"),
    ("btw", "by the way"),
    ("tbh", "to be honest"),
    ("imho", "in my humble opinion"),
    ("imo", "in my opinion"),
    ("ngl", "not gonna lie"),
    ("afaik", "as far as I know"),
    ("iirc", "if I remember correctly"),
    ("nvm", "never mind"),
    ("tbf", "to be fair"),
    ("ofc", "of course"),
    ("ikr", "I know, right"),
    ("omw", "on my way"),
    ("rn", "right now"),
    ("idk", "I don't know"),
    ("ppl", "people"),
    ("pls", "please"),
    ("plz", "please"),
    ("thx", "thanks"),
    ("brb", "be right back"),
    ("jk", "just kidding"),
    ("tmrw", "tomorrow"),
    ("ttyl", "talk to you later"),
    ("lmk", "let me know"),
    ("hbu", "how about you"),
    ("wbu", "what about you"),
    ("b/c", "because"),
    ("phd", "P-H-D"),
];

/// Abbreviations before a number: "No. 5", "pp. 3–7", "ca. 1850".
const BEFORE_NUMBER: &[(&str, &str)] = &[
    ("No", "number"),
    ("no", "number"),
    ("Nos", "numbers"),
    ("nos", "numbers"),
    ("p", "page"),
    ("pp", "pages"),
    ("Vol", "volume"),
    ("vol", "volume"),
    ("Fig", "figure"),
    ("fig", "figure"),
    ("Ch", "chapter"),
    ("ch", "chapter"),
    ("Sec", "section"),
    ("sec", "section"),
    ("Art", "article"),
    ("ca", "circa"),
    ("c", "circa"),
    ("approx", "approximately"),
    ("Approx", "approximately"),
    // "An est. 500 came"; "Est. 1998" on a sign is when it was established.
    ("est", "estimated"),
    ("Est", "established"),
    ("Ep", "episode"),
    ("ep", "episode"),
    ("Eps", "episodes"),
    ("ext", "extension"),
    ("Ext", "extension"),
    ("Pt", "part"),
    ("pt", "part"),
    ("Bk", "book"),
    ("Apt", "apartment"),
    ("apt", "apartment"),
    ("Rm", "room"),
    ("para", "paragraph"),
    ("paras", "paragraphs"),
    ("Para", "paragraph"),
];

/// Acronyms said as words, left for espeak to pronounce.
const SAID_AS_WORDS: &[&str] = &[
    "AIDS", "ASCII", "ASEAN", "BAFTA", "CAPTCHA", "CERN", "COVID", "DARPA", "FEMA", "FIFA", "FOMO",
    "GIF", "ICANN", "IKEA", "IMAX", "JPEG", "LASER", "LEGO", "MAX", "MERS", "MIDI", "NAFTA",
    "NASA", "NASCAR", "NASDAQ", "NATO", "NIMBY", "OFCOM", "OPEC", "OSHA", "PIN", "POTUS", "RADAR",
    "RAM", "ROM", "SARS", "SCOTUS", "SCUBA", "SIM", "SWAT", "UEFA", "UNESCO", "UNICEF", "YOLO",
];

fn lookup(table: &[(&str, &'static str)], word: &str) -> Option<&'static str> {
    table.iter().find(|(w, _)| *w == word).map(|(_, e)| *e)
}

/// Abbreviations of a part of a book, which number it with Roman numerals too ("Vol. II").
pub(super) fn takes_roman(word: &str) -> bool {
    matches!(
        word,
        "Vol" | "vol" | "Pt" | "pt" | "Ch" | "ch" | "Bk" | "Sec" | "sec" | "Art"
    )
}

/// A full stop after `word` never ends a sentence when `next` starts the following word.
pub(super) fn never_ends_sentence(word: &str, next: char) -> bool {
    // A noun's short form ends its sentence like the noun would ("it took 3 yrs. The end"),
    // while "e.g.", "vs." and "feat." always lead on to more.
    let is_noun = matches!(
        word,
        "wk" | "wks" | "qtr" | "mgmt" | "yr" | "yrs" | "dept" | "govt" | "misc" | "est" | "co"
    );
    let is_general = lookup(GENERAL, word).is_some() && word != "etc" && word != "al" && !is_noun
        || matches!(word, "v" | "P.S" | "N.B");
    (lookup(TITLES, word).is_some() && word != "St")
        || word == "Rs" && next.is_ascii_digit()
        || is_general
        || next.is_ascii_digit()
            && (lookup(BEFORE_NUMBER, word).is_some() || super::dates::month(word).is_some())
        || takes_roman(word) && matches!(next, 'I' | 'V' | 'X')
}

/// A full stop after `word` ends a sentence only if a sentence opener follows.
pub(super) fn may_end_sentence(word: &str) -> bool {
    lookup(AFTER_NAME, word).is_some() || matches!(word, "etc" | "al")
}

/// A run of letters inside a mixed token: short capitals are spelled ("MP" is "M-P").
pub(super) fn letters(run: &str) -> String {
    if is_spelled_acronym(run) {
        spell(run)
    } else {
        run.to_owned()
    }
}

fn is_spelled_acronym(word: &str) -> bool {
    (1..=5).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_uppercase())
        && !SAID_AS_WORDS.contains(&word)
        && !(word.len() >= 4 && looks_like_a_word(word))
}

/// Onsets English words start with; "NC" or "JS" at the start means letters, not a word.
const ONSETS: &[&str] = &[
    "BL", "BR", "CH", "CL", "CR", "DR", "FL", "FR", "GL", "GR", "KN", "PH", "PL", "PR", "QU", "SC",
    "SH", "SK", "SL", "SM", "SN", "SP", "ST", "SW", "TH", "TR", "TW", "WH", "WR",
];

/// A capitalised word of four or five letters that espeak can say as a word ("TOTAL", "STOP",
/// "HELP"): it has a vowel, no three consonants in a row and a plausible start. "HTML",
/// "ESPN", "NCAA" fail and are spelled.
fn looks_like_a_word(word: &str) -> bool {
    let vowel = |b: u8| matches!(b, b'A' | b'E' | b'I' | b'O' | b'U');
    let bytes = word.as_bytes();
    let has_vowel = bytes.iter().any(|&b| vowel(b));
    // Three consonants in a row, but for those English words have ("NIGHT", "MATCH",
    // "STRAP", "FIRST").
    let cluster = bytes.windows(3).any(|w| {
        w.iter().all(|&b| !vowel(b) && b != b'Y')
            && !CLUSTERS.contains(&std::str::from_utf8(w).unwrap_or(""))
    });
    let onset_ok =
        bytes.len() < 2 || vowel(bytes[0]) || vowel(bytes[1]) || ONSETS.contains(&&word[..2]);
    // "AAPL", "AMZN": no English word ends in "PL" or "ZN".
    let coda_ok = match bytes {
        [.., a, b] if !vowel(*a) && !vowel(*b) && *b != b'Y' => {
            CODAS.contains(&&word[word.len() - 2..])
        }
        _ => true,
    };
    has_vowel && !cluster && onset_ok && coda_ok
}

/// Runs of three consonants English words have: "NIGHT25" is "night twenty-five", not
/// "N-I-G-H-T-twenty-five".
const CLUSTERS: &[&str] = &[
    "GHT", "TCH", "NCH", "RST", "NST", "STR", "SCR", "SPR", "SPL", "THR", "CHR", "SHR", "PHR",
    "NGS", "NKS", "NDS", "NTS", "RTH", "NTH", "LTH",
];

/// Consonant pairs English words end with ("HELP", "DESK", "BANK"); "AAPL" and "AMZN" end in
/// none of them and are spelled.
const CODAS: &[&str] = &[
    "CH", "CK", "CT", "DS", "FF", "FT", "GH", "GS", "KS", "LD", "LF", "LK", "LL", "LM", "LP", "LS",
    "LT", "MP", "MS", "ND", "NG", "NK", "NS", "NT", "PH", "PS", "PT", "RB", "RD", "RF", "RK", "RL",
    "RM", "RN", "RP", "RS", "RT", "SH", "SK", "SP", "SS", "ST", "TH", "TS", "WN", "WS", "XT", "ZZ",
    "RC", "RG", "RV", "LV", "NC", "TZ", "DG", "HT",
];

/// File extensions as developers say them.
const EXTENSIONS: &[(&str, &str)] = &[
    ("js", "J-S"),
    ("ts", "T-S"),
    ("py", "P-Y"),
    ("rs", "R-S"),
    ("md", "M-D"),
    ("txt", "T-X-T"),
    ("csv", "C-S-V"),
    ("pdf", "P-D-F"),
    ("json", "JSON"),
    ("yaml", "YAML"),
    ("yml", "Y-M-L"),
    ("toml", "TOML"),
    ("html", "H-T-M-L"),
    ("css", "C-S-S"),
    ("png", "P-N-G"),
    ("jpg", "J-peg"),
    ("jpeg", "J-peg"),
    ("gif", "gif"),
    ("mp3", "M-P-three"),
    ("mp4", "M-P-four"),
    ("wav", "wave"),
    ("zip", "zip"),
    ("docx", "doc-X"),
    ("xlsx", "X-L-S-X"),
    ("exe", "E-X-E"),
    ("sh", "S-H"),
];

/// "Node.js" is "Node dot J-S", "README.md" "README dot M-D": a name, a dot and a known
/// extension (not a domain: those are read as addresses).
/// A name with digits reads them as numbers (`report_2024.pdf`, `config_v2.yaml`).
pub(super) fn file_name(core: &str, dialect: Dialect) -> Option<String> {
    let (base, said) = file_parts(core)?;
    let word = |piece: &str| {
        if piece.contains(|c: char| c.is_ascii_digit()) {
            super::numeric::single(piece, dialect)
                .or_else(|| super::numeric::mixed(piece, dialect))
                .unwrap_or_else(|| piece.to_owned())
        } else if base.contains(['_', '-']) {
            piece.to_owned()
        } else {
            letters(piece)
        }
    };
    let base: Vec<String> = base
        .split(['_', '-'])
        .filter(|p| !p.is_empty())
        .map(word)
        .collect();
    Some(format!("{} dot {said}", base.join(" ")))
}

/// Whether `core` is a file's name, told without reading it.
pub(super) fn is_file_name(core: &str) -> bool {
    file_parts(core).is_some()
}

/// A file name's base and its extension as said.
fn file_parts(core: &str) -> Option<(&str, &'static str)> {
    let (base, ext) = core.rsplit_once('.')?;
    let said = lookup(EXTENSIONS, ext)?;
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-');
    let name =
        !base.is_empty() && base.chars().all(name_char) && base.starts_with(char::is_alphabetic);
    name.then_some((base, said))
}

/// The Latin letter an accented one is named by when spelled (`É` is "E"); others as they are.
fn unaccented(c: char) -> char {
    const GROUPS: [(&str, char); 14] = [
        ("ÀÁÂÃÄÅĀĂĄàáâãäåāăą", 'a'),
        ("ÇĆĈĊČçćĉċč", 'c'),
        ("ĎĐďđ", 'd'),
        ("ÈÉÊËĒĔĖĘĚèéêëēĕėęě", 'e'),
        ("ĜĞĠĢĝğġģ", 'g'),
        ("ÌÍÎÏĨĪĬĮİìíîïĩīĭį", 'i'),
        ("ĹĻĽĿŁĺļľŀł", 'l'),
        ("ÑŃŅŇñńņň", 'n'),
        ("ÒÓÔÕÖØŌŎŐòóôõöøōŏő", 'o'),
        ("ŔŖŘŕŗř", 'r'),
        ("ŚŜŞŠśŝşš", 's'),
        ("ÙÚÛÜŨŪŬŮŰŲùúûüũūŭůűų", 'u'),
        ("ÝŸýÿ", 'y'),
        ("ŹŻŽźżž", 'z'),
    ];
    match GROUPS.iter().find(|(accented, _)| accented.contains(c)) {
        Some(&(_, base)) if c.is_uppercase() => base.to_ascii_uppercase(),
        Some(&(_, base)) => base,
        None => c,
    }
}

/// "FBI" as "F-B-I".
pub(super) fn spell(word: &str) -> String {
    let letters: Vec<String> = word.chars().map(|c| c.to_string()).collect();
    letters.join("-")
}

fn capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// Abbreviations, initials and acronyms at token `i`.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let tok = &ctx.toks[i];
    let core = tok.core;
    let period = tok.trail.starts_with('.');
    let next = ctx.next_core_after_period(i);
    let next_capital = next.is_some_and(capitalised);
    // A number, or after a part's abbreviation a Roman one ("Vol. II"; "No. I" is a reply).
    let next_number = next.is_some_and(|w| {
        w.starts_with(|c: char| c.is_ascii_digit())
            || takes_roman(core)
                && w.chars().all(|c| "IVXLC".contains(c))
                && super::roman::parse(w).is_some()
    });
    // The first word of a sentence is capitalised anyway, so it says nothing about names.
    let prev_name = i >= 2
        && ctx
            .prev_core_after_period(i)
            .is_some_and(|p| capitalised(p) || p.starts_with(|c: char| c.is_ascii_digit()));
    let expand = |words: &str, needs_period: bool| {
        let mut hit = Hit::new(1, words.to_owned());
        hit.eat_period = needs_period || period;
        Some(hit)
    };
    if let Some(zone) = zone_name(ctx, i) {
        return Some(Hit::new(1, zone.to_owned()));
    }
    if let Some(state) = state_name(ctx, i) {
        // "OR 97201": a ZIP code after the state is read digit by digit.
        let zip = ctx.next_core(i).filter(|z| {
            let (five, four) = z.split_once('-').unwrap_or((z, ""));
            five.len() == 5
                && five.bytes().all(|b| b.is_ascii_digit())
                && (four.is_empty() || four.len() == 4 && four.bytes().all(|b| b.is_ascii_digit()))
        });
        return Some(match zip {
            Some(zip) => {
                let said: Vec<String> = zip.split('-').map(super::numbers::digits).collect();
                Hit::new(2, format!("{state} {}", said.join(" ")))
            }
            None => Hit::new(1, state.to_owned()),
        });
    }
    // ".NET", "ASP.NET": Microsoft's platform is said "dot net" (after a name of letters; what
    // else ends in ".NET" is read by the rules for what it is).
    if let Some(base) = core
        .strip_suffix(".NET")
        .filter(|base| base.chars().all(|c| c.is_ascii_alphabetic()))
    {
        let words = if base.is_empty() {
            "dot net".to_owned()
        } else {
            format!("{} dot net", letters(base))
        };
        return Some(Hit::new(1, words));
    }
    // "Node.js", "README.md", "notes.txt": a file or library name is said with "dot" and
    // its extension as people say it (espeak made the dot a full stop's pause: "node. J S").
    if let Some(said) = file_name(core, ctx.dialect) {
        return Some(Hit::new(1, said));
    }
    // "USD 5", "INR 300", "Rs. 500": a currency written before its amount.
    let currency = super::money::code(core)
        .or_else(|| (core == "Rs").then(|| super::money::code("INR")).flatten());
    if let (Some(currency), Some(amount)) = (currency, next) {
        if amount.starts_with(|c: char| c.is_ascii_digit()) {
            if let Some(words) = super::money::amount(currency, amount, None, ctx.dialect) {
                // As after the amount ("100 USD"): the code says which dollars.
                let words = if core == "USD" {
                    words.replacen(" dollar", " U-S dollar", 1)
                } else {
                    words
                };
                return Some(Hit::new(2, words));
            }
        }
    }
    // Letter grades: "an A+", "a B- student".
    if let [grade @ b'A'..=b'F', sign @ (b'+' | b'-')] = core.as_bytes() {
        let sign = if *sign == b'+' { "plus" } else { "minus" };
        return Some(Hit::new(1, format!("{} {sign}", char::from(*grade))));
    }
    // "the 18th c.": a century after an ordinal ("c. 1850" before a number is circa).
    let after_ordinal = ctx.prev_core(i).is_some_and(|p| {
        p.starts_with(|c: char| c.is_ascii_digit())
            && ["st", "nd", "rd", "th"].iter().any(|s| p.ends_with(s))
    });
    if core == "c" && period && after_ordinal {
        return expand("century", true);
    }
    match core {
        "St" if next_capital && !prev_name => return expand("Saint", false),
        "St" if period || prev_name => return expand("Street", false),
        "Dr" if next_capital || !prev_name && period => return expand("Doctor", false),
        "Dr" if prev_name => return expand("Drive", false),
        "St" | "Dr" => return None,
        _ => {}
    }
    let unambiguous = matches!(
        core,
        "Mr" | "Mrs" | "Ms" | "Mx" | "Prof" | "Capt" | "Sgt" | "Lt" | "Cpl" | "Adm" | "Insp"
    );
    // "Gen Z", "Gen Alpha", "Gen AI" are a generation and a technology, not a general.
    let generation = core == "Gen"
        && !period
        && next.is_some_and(|w| {
            w.chars().all(|c| c.is_ascii_uppercase()) || matches!(w, "Alpha" | "Beta")
        });
    if let Some(title) =
        lookup(TITLES, core).filter(|_| (next_capital || unambiguous && period) && !generation)
    {
        return expand(title, false);
    }
    if let Some(words) = lookup(BEFORE_NUMBER, core).filter(|_| period && next_number) {
        return expand(words, true);
    }
    if let Some(words) = lookup(AFTER_NAME, core).filter(|_| period || prev_name) {
        return expand(words, false);
    }
    // "Dept." opens a name as "dept." sits in a sentence.
    let lower = core.to_lowercase();
    let title_case = core.chars().skip(1).all(|c| !c.is_uppercase());
    let general =
        lookup(GENERAL, core).or_else(|| title_case.then(|| lookup(GENERAL, &lower)).flatten());
    // Short forms that are no word are expanded without their stop too ("4th qtr").
    let no_word = matches!(lower.as_str(), "qtr" | "qtrs" | "mgmt" | "govt" | "dept");
    if let Some(words) = general.filter(|_| period || core == "vs" || no_word) {
        return expand(words, false);
    }
    // Chat shorthand an author leaves in a script: said as meant, with or without a stop
    // ("BTW" and "TBH" in capitals too: no name or body is spelled so).
    let shouted_shorthand = matches!(
        core,
        "BTW" | "TBH" | "IDK" | "IMHO" | "IMO" | "NGL" | "AFAIK" | "IIRC" | "TBF"
    );
    // "Imo State", "Ofc Smith": a capital with a name after it is a name.
    let before_name = capitalised(core) && next_capital && next != Some("I");
    let shorthand = title_case && !before_name || core == "PhD" || shouted_shorthand;
    // Shorthand is written without a stop, so one after it ends the sentence ("jk. lmk").
    let unstopped = |words: &str| Some(Hit::new(1, words.to_owned()));
    if let Some(words) = lookup(SHORTHAND, &lower).filter(|_| shorthand) {
        return unstopped(words);
    }
    // A chat's "u" and "ur" in small letters ("u coming?"); "U" is a letter, "Ur" a city, and
    // so is "u" after a number ("12 u", atomic mass) or a word that names a letter.
    let letter = ctx.prev_core(i).is_some_and(|p| {
        p.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            || matches!(
                p.to_lowercase().as_str(),
                "letter" | "lowercase" | "uppercase" | "vowel" | "small" | "capital" | "an"
            )
    });
    match core {
        "u" if !letter => return unstopped("you"),
        "ur" if !letter => return unstopped("your"),
        // Small letters only: "Ty" is a name, "NP" a complexity class.
        "ty" => return unstopped("thank you"),
        "np" => return unstopped("no problem"),
        "wyd" => return unstopped("what are you doing"),
        "omg" => return unstopped("O-M-G"),
        "lmao" => return unstopped("L-M-A-O"),
        _ => {}
    }
    match core {
        "v" if period && next_capital && ctx.prev_core_after_period(i).is_some_and(capitalised) => {
            return expand("versus", true);
        }
        "w/" => return expand("with", false),
        "w/o" => return expand("without", false),
        "TL;DR" | "TLDR" | "tl;dr" | "tldr" => return expand("T-L-D-R", false),
        // British rents and salaries: "£2,100 pcm", "£55k p.a.".
        "pcm" => return expand("per calendar month", false),
        "p.a" if period => return expand("per annum", true),
        // "a 67 y/o man": an age in a case note.
        "y/o" | "y.o" => return expand("year-old", true),
        "Hwy" | "hwy" if next_number => return expand("Highway", true),
        "aka" => return expand("also known as", false),
        "YoY" | "y/y" | "Y/Y" => return expand("year over year", false),
        "QoQ" | "q/q" | "Q/Q" => return expand("quarter over quarter", false),
        "MoM" | "m/m" | "M/M" => return expand("month over month", false),
        "w/w" | "W/W" => return expand("week over week", false),
        "OK" | "Ok" | "ok" => return expand("okay", false),
        // Microsoft's editor is "V-S Code", not "versus Code".
        "VS" if next == Some("Code") => return Some(Hit::new(1, "V-S".to_owned())),
        "VS" => return expand("versus", false),
        "WWI" => return expand("World War one", false),
        "WWII" => return expand("World War two", false),
        _ => {}
    }
    // Dotted initialisms: "U.S.", "Ph.D."
    if period && super::sentences::is_dotted_initialism(core) {
        if matches!(core, "a.m" | "p.m") {
            return expand(&core.replace('.', "-").to_uppercase(), true);
        }
        // Every letter, accented ones by their letter's name: "J.É." was read "J", its É
        // dropped (and espeak names a spelled "É" "E acute").
        let letters: String = core
            .chars()
            .filter(|c| c.is_alphabetic())
            .map(unaccented)
            .collect();
        return expand(&spell(&letters.to_uppercase()), true);
    }
    // Initials: "J. R. R. Tolkien". A lone "A" keeps its stop, or espeak reads the article.
    if period && core.len() == 1 && capitalised(core) && next_capital && core != "I" {
        let mut hit = Hit::new(1, core.to_owned());
        hit.eat_period = core != "A";
        return Some(hit);
    }
    // "Sat, 14 Sept", "Sat. 14th", and "Sat 14th Sept": a weekday before its date.
    let before_date = next.is_some_and(|w| {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        digits.parse::<u8>().is_ok_and(|d| (1..=31).contains(&d))
    });
    if let Some(day) = day_name(core)
        .filter(|_| (tok.trail.starts_with([',', '.']) || before_date) && !ctx.shouting)
    {
        return expand(day, false);
    }
    // "Mon–Fri", "Mon-Thurs": a range of weekdays; "Nov–Dec", "Jan-Mar": of months.
    if let Some((a, b)) = core.split_once(['-', '–']) {
        let day = |w: &str| day_name(w.trim_end_matches('.'));
        if let (Some(a), Some(b)) = (day(a), day(b)) {
            return expand(&format!("{a} to {b}"), false);
        }
        let month = |w: &str| {
            let w = w.trim_end_matches('.');
            super::dates::month(w)
                .filter(|_| (3..=4).contains(&w.len()) && w.starts_with(char::is_uppercase))
        };
        if let (Some(a), Some(b)) = (month(a), month(b)) {
            let name = |m: usize| super::dates::MONTHS[m - 1];
            return expand(&format!("{} to {}", name(a), name(b)), false);
        }
    }
    // "from Jan. to Mar.": a month's abbreviation with its stop, in a span of months, is the
    // month (a bare "Jan" may be a name; before a day, `dates` reads it).
    let span_word = |w: Option<&str>, words: &[&str]| {
        w.is_some_and(|w| words.iter().any(|s| w.eq_ignore_ascii_case(s)))
    };
    if period
        && (span_word(next, &["to", "through", "until", "till", "and", "or"])
            || span_word(
                ctx.prev_core(i),
                &[
                    "from", "since", "until", "till", "through", "to", "in", "by", "and", "of",
                    "early", "late", "mid", "last", "next", "this",
                ],
            ))
    {
        if let Some(month) = super::dates::month(core).filter(|_| core.len() <= 4) {
            return expand(super::dates::MONTHS[month - 1], false);
        }
    }
    super::emphasis::rule(ctx, i)
        .or_else(|| hyphenated(ctx, core))
        .or_else(|| acronym(ctx, core))
}

/// Whether `word` is a weekday's abbreviation ("Tues").
pub(super) fn is_day_abbreviation(word: &str) -> bool {
    day_name(word).is_some()
}

/// Weekday abbreviations, expanded when punctuation follows ("Mon., Jan. 6").
fn day_name(word: &str) -> Option<&'static str> {
    const DAYS: &[(&str, &str)] = &[
        ("Mon", "Monday"),
        ("Tue", "Tuesday"),
        ("Tues", "Tuesday"),
        ("Wed", "Wednesday"),
        ("Thu", "Thursday"),
        ("Thurs", "Thursday"),
        ("Fri", "Friday"),
        ("Sat", "Saturday"),
        ("Sun", "Sunday"),
    ];
    lookup(DAYS, word)
}

/// "US-based" as "U-S-based": acronym parts of a hyphenated word are spelled.
fn hyphenated(ctx: &Ctx<'_>, core: &str) -> Option<Hit> {
    if ctx.shouting || !core.contains('-') {
        return None;
    }
    let parts: Vec<&str> = core.split('-').collect();
    if !parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic))
    {
        return None;
    }
    let spelled = |p: &str| p.len() >= 2 && is_spelled_acronym(p);
    if !parts.iter().any(|p| spelled(p)) {
        return None;
    }
    let words: Vec<String> = parts
        .iter()
        .map(|p| {
            if spelled(p) {
                spell(p)
            } else {
                (*p).to_owned()
            }
        })
        .collect();
    Some(Hit::new(1, words.join("-")))
}

/// "FBI", "FBI's", "CDs" spelled unless said as words. In a shouted sentence capitals are
/// emphasis and become ordinary words; lower case also keeps a second normalisation from
/// spelling them once the sentence no longer looks shouted.
fn acronym(ctx: &Ctx<'_>, core: &str) -> Option<Hit> {
    if ctx.shouting {
        let capitals = core.chars().filter(char::is_ascii_uppercase).count();
        let word_like = core.chars().all(|c| c.is_ascii_alphabetic() || c == '\'');
        // "VS" lower-cased is "vs", which a second pass would expand: expand it now, so
        // normalising twice changes nothing.
        let word = match core.to_lowercase() {
            w if w == "vs" => "versus".to_owned(),
            w => w,
        };
        return (capitals >= 2 && word_like && !core.contains(char::is_lowercase))
            .then(|| Hit::new(1, word));
    }
    let (base, suffix) = if let Some(b) = core.strip_suffix("'s") {
        (b, "'s")
    } else if let Some(b) = core.strip_suffix('s').filter(|b| b.len() >= 2) {
        (b, "'s")
    } else {
        (core, "")
    };
    // "FTSE" is the Footsie, as every market report says it.
    if base == "FTSE" {
        return Some(Hit::new(1, format!("Footsie{suffix}")));
    }
    // "BoE", "DoJ", "TfL", "PoC": an initialism with a lower-case "of" or "for" inside is
    // spelled like any other (espeak made "BoE" one syllable); World of Warcraft is "WoW".
    let bytes = base.as_bytes();
    if let [a, b, c] = bytes {
        if a.is_ascii_uppercase()
            && b.is_ascii_lowercase()
            && c.is_ascii_uppercase()
            && base != "WoW"
        {
            return Some(Hit::new(
                1,
                format!("{}{suffix}", spell(&base.to_uppercase())),
            ));
        }
    }
    // "mRNA", "tRNA", "pH": a lower-case prefix on capitals is spelled with them (espeak
    // read "mRNA" as one word).
    let mut letters = base.chars();
    let prefixed = letters.next().is_some_and(|c| c.is_ascii_lowercase())
        && (2..=5).contains(&base.len())
        && letters.all(|c| c.is_ascii_uppercase());
    if prefixed {
        return Some(Hit::new(
            1,
            format!("{}{suffix}", spell(&base.to_uppercase())),
        ));
    }
    if base.len() < 2 || !is_spelled_acronym(base) {
        return None;
    }
    Some(Hit::new(1, format!("{}{suffix}", spell(base))))
}

/// US states and Canadian provinces by their postal codes (`OK` is left out: "Fine, OK." is
/// okay, not Oklahoma).
const STATES: [(&str, &str); 60] = [
    ("AL", "Alabama"),
    ("AK", "Alaska"),
    ("AZ", "Arizona"),
    ("AR", "Arkansas"),
    ("CA", "California"),
    ("CO", "Colorado"),
    ("CT", "Connecticut"),
    ("DE", "Delaware"),
    ("DC", "D-C"),
    ("FL", "Florida"),
    ("GA", "Georgia"),
    ("HI", "Hawaii"),
    ("ID", "Idaho"),
    ("IL", "Illinois"),
    ("IN", "Indiana"),
    ("IA", "Iowa"),
    ("KS", "Kansas"),
    ("KY", "Kentucky"),
    ("LA", "Louisiana"),
    ("ME", "Maine"),
    ("MD", "Maryland"),
    ("MA", "Massachusetts"),
    ("MI", "Michigan"),
    ("MN", "Minnesota"),
    ("MS", "Mississippi"),
    ("MO", "Missouri"),
    ("MT", "Montana"),
    ("NE", "Nebraska"),
    ("NV", "Nevada"),
    ("NH", "New Hampshire"),
    ("NJ", "New Jersey"),
    ("NM", "New Mexico"),
    ("NY", "New York"),
    ("NC", "North Carolina"),
    ("ND", "North Dakota"),
    ("OH", "Ohio"),
    ("OR", "Oregon"),
    ("PA", "Pennsylvania"),
    ("RI", "Rhode Island"),
    ("SC", "South Carolina"),
    ("SD", "South Dakota"),
    ("TN", "Tennessee"),
    ("TX", "Texas"),
    ("UT", "Utah"),
    ("VT", "Vermont"),
    ("VA", "Virginia"),
    ("WA", "Washington"),
    ("WV", "West Virginia"),
    ("WI", "Wisconsin"),
    ("WY", "Wyoming"),
    ("ON", "Ontario"),
    ("QC", "Quebec"),
    ("BC", "British Columbia"),
    ("AB", "Alberta"),
    ("MB", "Manitoba"),
    ("SK", "Saskatchewan"),
    ("NS", "Nova Scotia"),
    ("NB", "New Brunswick"),
    ("NL", "Newfoundland and Labrador"),
    ("PE", "Prince Edward Island"),
];

/// Words that open a reply before a comma, not a place ("Well, OR…", "Yes, IN theory").
const NOT_PLACES: [&str; 14] = [
    "Yes", "No", "Well", "Oh", "So", "And", "But", "Or", "Hello", "Hi", "Fine", "Sure", "Right",
    "Okay",
];

/// "Austin, TX", "Portland, OR 97201", "Vancouver, BC": a state's or province's postal code
/// after a place and its comma is said as its name, as a reader would ("Austin, Texas"), not
/// spelled.
fn state_name(ctx: &Ctx<'_>, i: usize) -> Option<&'static str> {
    let core = ctx.toks[i].core;
    let (_, name) = STATES.iter().find(|(code, _)| *code == core)?;
    let prev = ctx.toks.get(i.checked_sub(1)?)?;
    let place = prev.trail == ","
        && prev.core.starts_with(|c: char| c.is_uppercase())
        && prev.core.chars().any(char::is_lowercase)
        && !NOT_PLACES.contains(&prev.core);
    // What follows is the sentence's end, a comma, a ZIP code or more of the sentence.
    let next_ok = ctx.toks.get(i + 1).is_none_or(|next| {
        !ctx.toks[i].trail.is_empty()
            || next
                .core
                .starts_with(|c: char| c.is_ascii_digit() || c.is_lowercase())
    });
    (place && next_ok).then_some(*name)
}

/// "9:30pm ET", "10 a.m. PT": the US zones written without a season are said by their names
/// after a time ("nine thirty P-M Eastern"), as broadcasters say them.
fn zone_name(ctx: &Ctx<'_>, i: usize) -> Option<&'static str> {
    let name = match ctx.toks[i].core {
        "ET" => "Eastern",
        "PT" => "Pacific",
        "CT" => "Central",
        "MT" => "Mountain",
        _ => return None,
    };
    let prev = ctx.prev_core_after_period(i)?;
    let lower = prev.to_ascii_lowercase();
    let clock = |t: &str| {
        t.split_once(':').is_some_and(|(h, m)| {
            !h.is_empty() && h.chars().all(|c| c.is_ascii_digit()) && m.len() == 2
        })
    };
    let timed = super::dates::meridiem(prev).is_some()
        || ["am", "pm"].iter().any(|m| {
            lower
                .strip_suffix(m)
                .is_some_and(|t| t.ends_with(|c: char| c.is_ascii_digit()))
        })
        || clock(prev);
    timed.then_some(name)
}

/// Time zones, written in capitals whoever writes them.
const TIME_ZONES: &[&str] = &[
    "ET", "CT", "MT", "PT", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "AKST", "HST",
    "GMT", "UTC", "BST", "CET", "CEST", "EET", "IST", "JST", "AEST", "AEDT", "NZST",
];

/// Whether most words of the sentence are in capitals (then capitals are emphasis). Words with
/// digits ("FY2025", "Q3", "H100") are names written in capitals, not shouting, and so are
/// meridiems and time zones ("10 AM PT / 1 PM ET" is a time, not a shout): they count neither
/// way.
pub(super) fn is_shouted(cores: &[&str]) -> bool {
    let words: Vec<&&str> = cores
        .iter()
        .filter(|c| {
            c.chars().any(char::is_alphabetic)
                && !c.chars().any(|ch| ch.is_ascii_digit())
                && super::dates::meridiem(c).is_none()
                && !TIME_ZONES.contains(c)
        })
        .collect();
    let caps: Vec<&&&str> = words
        .iter()
        .filter(|c| c.len() >= 2 && c.chars().all(|ch| !ch.is_lowercase()))
        .collect();
    // "FYI, ASAP, DIY and FAQ" is a row of initialisms, not a shout: a shout has words in it,
    // at least two of them common short words, long words or contractions.
    let wordy = caps
        .iter()
        .filter(|c| {
            c.chars().filter(|ch| ch.is_alphabetic()).count() >= 5
                || c.contains(['\'', '’'])
                || super::emphasis::is_common_word(
                    c.trim_end_matches(|ch: char| !ch.is_alphabetic()),
                )
        })
        .count();
    // "NO WAY.", "OH MY GOD!": a short shout, every word of it in capitals and common.
    let short_shout = caps.len() == 2 && words.len() == 2 && wordy == 2;
    caps.len() >= 3 && caps.len() * 2 > words.len() && wordy >= 2 || short_shout
}

/// Common short words: two of them in capitals make a sentence of capitals a shout rather
/// than a list of initialisms.
pub(super) const SHOUTED_WORDS: &[&str] = &[
    "AN", "AS", "AT", "BE", "BY", "DO", "GO", "HE", "IF", "IN", "IS", "IT", "ME", "MY", "NO", "OF",
    "OH", "ON", "OR", "SO", "TO", "UP", "WE", "ALL", "AND", "ANY", "ARE", "BAD", "BIG", "BUT",
    "CAN", "DAY", "DID", "FOR", "GET", "GOD", "GOT", "HAD", "HAS", "HER", "HEY", "HIM", "HIS",
    "HOW", "ITS", "LET", "MAN", "NEW", "NOT", "NOW", "OFF", "OLD", "ONE", "OUR", "OUT", "RUN",
    "SAW", "SAY", "SEE", "SHE", "THE", "TOO", "TRY", "TWO", "WAS", "WAY", "WHO", "WHY", "WIN",
    "WOW", "YES", "YET", "YOU", "ALSO", "BACK", "BEEN", "BEST", "COME", "DONE", "DOWN", "EVEN",
    "EVER", "FROM", "GIVE", "GOOD", "HATE", "HAVE", "HELP", "HERE", "HOME", "JUST", "KNOW", "LIKE",
    "LIVE", "LOOK", "LOVE", "MADE", "MAKE", "MORE", "MOST", "MUCH", "MUST", "NEED", "NEXT", "ONLY",
    "OVER", "REAL", "SAID", "SOME", "STOP", "SURE", "TAKE", "TELL", "THAN", "THAT", "THEM", "THEN",
    "THEY", "THIS", "TIME", "VERY", "WAIT", "WANT", "WELL", "WENT", "WERE", "WHAT", "WHEN", "WILL",
    "WITH", "WORK", "YEAH", "YOUR",
];
