//! A likely gender from a speaker's name, for automatic casting.
//!
//! A play's men were cast with women's voices when casting only alternated: two of three men got
//! `af_heart` and `af_bella`. A title or role word ("Mrs", "Sir", "Mother") or a common given
//! name ("Tom", "Mary") says which voices to try first. A name is weak evidence about a person,
//! and a character is whoever the author says, so what this module gives is only ever a
//! *guess*: the cast records it as one ([`super::CastMember::guess`]) and the studio says so
//! beside the speaker, where a wrong guess is one click to fix. Names borne by many people of
//! either gender (Alex, Sam, Jordan, Robin, Jean, Andrea, Kim…) are deliberately absent: an
//! unknown name is cast by the cast's balance, not guessed. The table is embedded (no network,
//! no data files) and small: names common in English-language scripts and a few frequent
//! elsewhere, lower case, sorted, so a lookup is a binary search.

use serde::Serialize;

/// Whether a voice is a woman's or a man's (the second letter of a stock voice's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gender {
    Female,
    Male,
}

impl Gender {
    fn of(female: bool) -> Self {
        if female {
            Self::Female
        } else {
            Self::Male
        }
    }

    /// `female` or `male`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Female => "female",
            Self::Male => "male",
        }
    }
}

/// What in a name automatic casting read a gender from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuessBasis {
    /// A title or role word: "Mrs", "Sir", "Mother".
    Title,
    /// A common given name: "Tom", "Mary".
    GivenName,
    /// A word of the script's character list describing them: "widow", "fisherman".
    Description,
}

/// A likely gender read from a speaker's name, and the word it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenderGuess {
    pub gender: Gender,
    pub basis: GuessBasis,
    /// The word of the name, as written.
    pub word: String,
}

impl GenderGuess {
    /// The guess in words: `a male voice, guessed from the given name "Tom"`.
    #[must_use]
    pub fn describe(&self) -> String {
        let basis = match self.basis {
            GuessBasis::Title => "title",
            GuessBasis::GivenName => "given name",
            GuessBasis::Description => "character list's word",
        };
        format!(
            "a {} voice, guessed from the {basis} \"{}\"",
            self.gender.as_str(),
            self.word
        )
    }
}

/// Given names most people who bear them are women, lower case, sorted.
const FEMALE: [&str; 148] = [
    "abigail",
    "ada",
    "agnes",
    "alice",
    "alison",
    "amanda",
    "amelia",
    "amy",
    "ana",
    "angela",
    "anita",
    "ann",
    "anna",
    "anne",
    "annie",
    "barbara",
    "beatrice",
    "becky",
    "bella",
    "beth",
    "betty",
    "brenda",
    "bridget",
    "camila",
    "carla",
    "carmen",
    "carol",
    "caroline",
    "catherine",
    "charlotte",
    "chloe",
    "christina",
    "christine",
    "claire",
    "clara",
    "cleo",
    "cynthia",
    "daisy",
    "deborah",
    "denise",
    "diana",
    "diane",
    "donna",
    "doris",
    "dorothy",
    "edith",
    "eleanor",
    "elena",
    "elizabeth",
    "ella",
    "ellen",
    "eloise",
    "elsa",
    "emily",
    "emma",
    "erica",
    "esther",
    "eva",
    "eve",
    "evelyn",
    "fatima",
    "fiona",
    "florence",
    "frances",
    "gemma",
    "georgia",
    "gloria",
    "grace",
    "hannah",
    "harriet",
    "heather",
    "helen",
    "holly",
    "irene",
    "isabel",
    "isabella",
    "ivy",
    "jane",
    "janet",
    "jennifer",
    "jenny",
    "jessica",
    "joan",
    "joanna",
    "josephine",
    "joyce",
    "judith",
    "judy",
    "julia",
    "julie",
    "karen",
    "kate",
    "katherine",
    "kathleen",
    "katie",
    "laura",
    "lily",
    "linda",
    "lisa",
    "lois",
    "lorna",
    "louise",
    "lucy",
    "lydia",
    "maggie",
    "margaret",
    "maria",
    "marie",
    "martha",
    "mary",
    "maya",
    "megan",
    "melissa",
    "mia",
    "michelle",
    "miriam",
    "molly",
    "monica",
    "nancy",
    "natalie",
    "nina",
    "nora",
    "olivia",
    "pamela",
    "patricia",
    "paula",
    "penelope",
    "phoebe",
    "priya",
    "rachel",
    "rebecca",
    "rose",
    "ruby",
    "ruth",
    "sally",
    "samantha",
    "sandra",
    "sara",
    "sarah",
    "sofia",
    "sophie",
    "stella",
    "susan",
    "teresa",
    "victoria",
    "violet",
    "wendy",
    "zoe",
];

/// Given names most people who bear them are men, lower case, sorted.
const MALE: [&str; 149] = [
    "aaron",
    "adam",
    "ahmed",
    "alan",
    "albert",
    "alexander",
    "alfred",
    "andrew",
    "anthony",
    "arthur",
    "banquo",
    "barry",
    "ben",
    "benjamin",
    "bill",
    "bob",
    "brian",
    "bruce",
    "carl",
    "carlos",
    "charles",
    "claudius",
    "colin",
    "craig",
    "dan",
    "daniel",
    "darren",
    "dave",
    "david",
    "dennis",
    "derek",
    "dick",
    "donald",
    "douglas",
    "duncan",
    "edgar",
    "edward",
    "eric",
    "ernest",
    "falstaff",
    "felix",
    "frank",
    "fred",
    "frederick",
    "gary",
    "geoffrey",
    "george",
    "gerald",
    "gordon",
    "graham",
    "greg",
    "gregory",
    "hamlet",
    "harold",
    "harry",
    "hassan",
    "henry",
    "horatio",
    "howard",
    "hugh",
    "iago",
    "ian",
    "isaac",
    "ivan",
    "jack",
    "jacob",
    "jake",
    "james",
    "jason",
    "jeff",
    "jeremy",
    "jim",
    "joe",
    "john",
    "jonathan",
    "jose",
    "joseph",
    "juan",
    "keith",
    "ken",
    "kenneth",
    "kevin",
    "larry",
    "lawrence",
    "lear",
    "leo",
    "leonard",
    "liam",
    "louis",
    "luke",
    "macbeth",
    "malcolm",
    "marcus",
    "mark",
    "martin",
    "matthew",
    "michael",
    "mike",
    "mohammed",
    "nathan",
    "neil",
    "nicholas",
    "nick",
    "noah",
    "oliver",
    "oscar",
    "othello",
    "owen",
    "patrick",
    "paul",
    "pedro",
    "peter",
    "philip",
    "polonius",
    "prospero",
    "ralph",
    "ray",
    "raymond",
    "richard",
    "rob",
    "robert",
    "roger",
    "romeo",
    "ronald",
    "roy",
    "russell",
    "ryan",
    "scott",
    "sean",
    "simon",
    "stanley",
    "stephen",
    "steve",
    "steven",
    "stuart",
    "ted",
    "theo",
    "thomas",
    "tim",
    "timothy",
    "tom",
    "tony",
    "trevor",
    "victor",
    "vincent",
    "walter",
    "wayne",
    "william",
    "yusuf",
];

/// Female (`Some(true)`) or male (`Some(false)`) for a given name in the table, any case;
/// `None` for a name it does not hold.
fn likely_female(word: &str) -> Option<bool> {
    let key = word.to_lowercase();
    if contains(&FEMALE, &key) {
        Some(true)
    } else if contains(&MALE, &key) {
        Some(false)
    } else {
        None
    }
}

fn contains(table: &[&str], key: &str) -> bool {
    table.binary_search(&key).is_ok()
}

/// A likely gender from `name`: a title or role word anywhere in it first ("Lady Bracknell",
/// "Tom's mother"), then a role word in the character list's `description` of them ("the
/// keeper's widow", "a young fisherman"), else the first word of the name that is a common given
/// name.
pub(crate) fn guess_gender(name: &str, description: Option<&str>) -> Option<GenderGuess> {
    let guess = |female: bool, basis, word: &str| GenderGuess {
        gender: Gender::of(female),
        basis,
        word: word.to_owned(),
    };
    titled(name)
        .or_else(|| {
            description?
                .split(|c: char| !c.is_alphanumeric() && c != '\'')
                .find_map(|w| role_word(w).map(|f| guess(f, GuessBasis::Description, w)))
        })
        .or_else(|| {
            words(name)
                .find_map(|word| likely_female(word).map(|f| guess(f, GuessBasis::GivenName, word)))
        })
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Whether a word of a description says a woman (`true`) or a man (`false`): the title and
/// role words names use, and the nouns a character list describes people by.
fn role_word(word: &str) -> Option<bool> {
    const FEMALE: [&str; 34] = [
        "actress",
        "aunt",
        "bride",
        "daughter",
        "fiancée",
        "girl",
        "girlfriend",
        "granddaughter",
        "grandma",
        "grandmother",
        "heroine",
        "hostess",
        "housewife",
        "lady",
        "landlady",
        "lass",
        "mom",
        "mother",
        "mum",
        "niece",
        "nun",
        "princess",
        "queen",
        "sister",
        "stepdaughter",
        "stepmother",
        "stepsister",
        "waitress",
        "widow",
        "wife",
        "woman",
        "mrs",
        "ms",
        "duchess",
    ];
    const MALE: [&str; 32] = [
        "boy",
        "boyfriend",
        "brother",
        "dad",
        "duke",
        "father",
        "fiancé",
        "gentleman",
        "granddad",
        "grandfather",
        "grandpa",
        "grandson",
        "groom",
        "husband",
        "king",
        "lad",
        "landlord",
        "lord",
        "man",
        "monk",
        "mr",
        "nephew",
        "priest",
        "prince",
        "son",
        "stepbrother",
        "stepfather",
        "stepson",
        "uncle",
        "waiter",
        "widower",
        "sir",
    ];
    let w = word
        .trim_end_matches("'s")
        .trim_end_matches('\'')
        .to_lowercase();
    if FEMALE.contains(&w.as_str()) || (w.len() > 5 && w.ends_with("woman")) {
        return Some(true);
    }
    // `fisherman`, `policeman`, but not `human`, `german` or `shaman`.
    let manly = w.len() > 5
        && w.ends_with("man")
        && !matches!(
            w.as_str(),
            "human" | "german" | "shaman" | "caiman" | "ottoman"
        );
    (MALE.contains(&w.as_str()) || manly).then_some(false)
}

/// A title or role word anywhere in `name`: "Lady Bracknell", "Tom's mother".
fn titled(name: &str) -> Option<GenderGuess> {
    const FEMALE: [&str; 20] = [
        "mrs", "miss", "ms", "lady", "queen", "princess", "duchess", "mother", "sister", "aunt",
        "woman", "girl", "madam", "madame", "wife", "daughter", "dame", "mme", "señora", "frau",
    ];
    const MALE: [&str; 18] = [
        "mr",
        "sir",
        "lord",
        "king",
        "prince",
        "duke",
        "father",
        "brother",
        "uncle",
        "man",
        "boy",
        "gentleman",
        "husband",
        "son",
        "monsieur",
        "señor",
        "herr",
        "mister",
    ];
    words(name).find_map(|word| {
        let w = word.to_lowercase();
        let female = if FEMALE.contains(&w.as_str()) {
            true
        } else if MALE.contains(&w.as_str()) {
            false
        } else {
            return None;
        };
        Some(GenderGuess {
            gender: Gender::of(female),
            basis: GuessBasis::Title,
            word: word.to_owned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_distinct_and_apart() {
        for table in [&FEMALE[..], &MALE[..]] {
            assert!(
                table.windows(2).all(|w| w[0] < w[1]),
                "sorted, no name twice"
            );
        }
        for name in FEMALE {
            assert!(!MALE.contains(&name), "{name} is in both tables");
        }
    }

    #[test]
    fn a_description_decides_between_title_and_given_name() {
        let g = |name: &str, d: Option<&str>| guess_gender(name, d).map(|g| (g.gender, g.word));
        let female = |w: &str| Some((Gender::Female, w.to_owned()));
        let male = |w: &str| Some((Gender::Male, w.to_owned()));
        assert_eq!(g("Sam", Some("the keeper's widow, 60s")), female("widow"));
        assert_eq!(g("Jo", Some("a young fisherman")), male("fisherman"));
        assert_eq!(g("Jo", Some("a policewoman")), female("policewoman"));
        assert_eq!(g("Tom", Some("her brother")), male("brother"));
        // A title in the name outranks the description; the description outranks a given name.
        assert_eq!(g("Lady Ann", Some("a fisherman")), female("Lady"));
        assert_eq!(g("Tom", Some("a retired nun")), female("nun"));
        // Words that end in "man" without being one.
        assert_eq!(g("Kit", Some("a German human rights lawyer")), None);
        assert_eq!(g("Tom", None), male("Tom"));
    }

    #[test]
    fn names_are_found_in_any_case_and_shared_names_are_not() {
        assert_eq!(likely_female("TOM"), Some(false));
        assert_eq!(likely_female("Hamlet"), Some(false));
        assert_eq!(likely_female("mary"), Some(true));
        for shared in [
            "Alex", "Sam", "Jordan", "Robin", "Jean", "Andrea", "Kim", "Host",
        ] {
            assert_eq!(likely_female(shared), None, "{shared}");
        }
    }
}
