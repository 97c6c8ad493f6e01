//! Speakers matched to the cast: one spelling per speaker (variants are merged with a warning
//! saying how they differ), a name that extends another's or is one slip from it flagged,
//! voices assigned to the rest by the casting rules, and cast entries that never speak
//! reported.

use std::collections::{HashMap, HashSet};

use crate::cast::{
    assign_voices, speaker_key, Cast, CastEntry, CastMember, CastingRules, Speaks, VoiceSource,
};
use crate::characters::CharacterList;
use crate::error::{ScriptError, ScriptErrorKind};
use crate::language::{Languages, ScriptLanguage, Told, Written};
use crate::model::{Line, Position, Warning};
use crate::names::{display_name, how_they_differ};

/// A speaker heard once whose name is another speaker's name plus more (`HENRIETTA MARLOWE. I`
/// beside `HENRIETTA MARLOWE`) is most likely that speaker with the first word of the speech
/// read into the name; say so where it happened.
fn warn_extended_names(
    speakers: &[String],
    turns: &[usize],
    first_line: &[Position],
    warnings: &mut Vec<Warning>,
) {
    let keys: Vec<String> = speakers.iter().map(|s| speaker_key(s)).collect();
    for (i, key) in keys.iter().enumerate() {
        if turns[i] != 1 {
            continue;
        }
        let base = keys.iter().enumerate().find(|&(j, other)| {
            j != i
                && key.len() > other.len()
                && key.starts_with(other.as_str())
                && key[other.len()..].starts_with(|c: char| !c.is_alphanumeric())
        });
        if let Some((j, _)) = base {
            warnings.push(Warning {
                position: first_line[i],
                message: format!(
                    "`{}` speaks only here and the name extends `{}`'s; if this is {} speaking, the start of the speech was read as part of the name: put it on its own line or after a colon",
                    speakers[i], speakers[j], speakers[j]
                ),
            });
        }
    }
}

/// A speaker heard once whose name is one slip of the keyboard from a speaker heard more
/// often (`Hots` beside `HOST`: two letters swapped, one left out or added, or in names of five
/// letters or more one mistyped) is most likely that speaker misspelled; say so where it
/// happened, since as written it gets a voice of its own. Names in the cast list are meant and
/// not flagged.
fn warn_misspelled_names(
    speakers: &[String],
    turns: &[usize],
    first_line: &[Position],
    listed: &HashMap<String, &CastEntry>,
    warnings: &mut Vec<Warning>,
) {
    let keys: Vec<String> = speakers.iter().map(|s| speaker_key(s)).collect();
    for (i, key) in keys.iter().enumerate() {
        if turns[i] != 1 || listed.contains_key(key) {
            continue;
        }
        let near = keys
            .iter()
            .enumerate()
            .find(|&(j, other)| j != i && turns[j] >= 2 && one_slip(key, other));
        if let Some((j, _)) = near {
            warnings.push(Warning {
                position: first_line[i],
                message: format!(
                    "`{}` speaks only here and the name is one slip from `{}` ({} turns); if this is {} speaking, correct the name: as written it gets a voice of its own",
                    speakers[i], speakers[j], turns[j], speakers[j]
                ),
            });
        }
    }
}

/// `a` is `b` with two neighbouring letters swapped, one letter left out or added, or (in
/// names of five letters or more) one letter replaced by another.
fn one_slip(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().min(b.len()) < 3 || a == b {
        return false;
    }
    if a.len() == b.len() {
        let diff: Vec<usize> = (0..a.len()).filter(|&k| a[k] != b[k]).collect();
        return match diff[..] {
            [k] => a.len() >= 5 && a[k].is_alphabetic() && b[k].is_alphabetic(),
            [k, l] => l == k + 1 && a[k] == b[l] && a[l] == b[k],
            _ => false,
        };
    }
    let (long, short) = if a.len() > b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() != short.len() + 1 {
        return false;
    }
    let k = (0..short.len())
        .find(|&k| long[k] != short[k])
        .unwrap_or(short.len());
    long[k].is_alphabetic() && long[k + 1..] == short[k..]
}

/// The speaker a label with a bracketed part means when the script names that speaker
/// elsewhere: `Host 1 (Alex)` beside `Alex`, `Dr. Reyes (guest)` beside `Dr. Reyes`, `ALEX
/// (whispering)` beside `ALEX` (what chat assistants write and scripts annotate); the name
/// found, or `None` when the label stands alone.
fn bracket_alias(label: &str, known: &HashSet<String>) -> Option<String> {
    let (outside, inside) = label.trim_end().strip_suffix(')')?.rsplit_once('(')?;
    let own = speaker_key(label);
    [inside, outside]
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .find(|part| {
            let key = speaker_key(part);
            key != own && known.contains(&key)
        })
        .map(str::to_owned)
}

/// Says what a script written in another of Kokoro's languages changed: the speakers cast
/// automatically got that language's voices (and which of them share one, where it has too few),
/// and a voice the cast gives that speaks another language reads the words with its sounds.
fn warn_language(
    language: ScriptLanguage,
    members: &[CastMember],
    first_line: &[Position],
    warnings: &mut Vec<Warning>,
) {
    let name = language.name;
    let automatic: Vec<(usize, &CastMember)> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.source == VoiceSource::Automatic)
        .collect();
    if let Some(&(first, _)) = automatic.first() {
        warnings.push(Warning {
            position: first_line[first],
            message: format!(
                "the script is written in {name}, so the speakers the cast gives no voice are \
                 given {name} voices (an English voice would read the words with English \
                 sounds); name voices in a cast header to choose others"
            ),
        });
    }
    let mut by_voice: HashMap<&str, Vec<&str>> = HashMap::new();
    for (_, m) in &automatic {
        by_voice.entry(&m.voice).or_default().push(&m.name);
    }
    let mut shared: Vec<(&str, Vec<&str>)> =
        by_voice.into_iter().filter(|(_, n)| n.len() > 1).collect();
    shared.sort_unstable();
    for (voice, names) in shared {
        let first = automatic
            .iter()
            .find(|(_, m)| m.voice == voice)
            .map_or(Position::START, |(i, _)| first_line[*i]);
        warnings.push(Warning {
            position: first,
            message: format!(
                "Kokoro has too few {name} voices for this cast: {} share `{voice}`; give one \
                 of them a blend or a Piper voice in the cast header to tell them apart",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        });
    }
    for m in members {
        let VoiceSource::Cast { position } = m.source else {
            continue;
        };
        if let Some(spoken) = crate::language::of_voice(&m.voice).filter(|&l| l != name) {
            warnings.push(Warning {
                position,
                message: format!(
                    "`{}` is cast as `{}`, a voice that speaks {spoken}, but the script is \
                     written in {name}: its words will be read with {spoken} sounds",
                    m.name, m.voice
                ),
            });
        }
    }
}

/// Says that a script is written in a language no Kokoro voice speaks, at the first line of the
/// first speaker a Kokoro voice reads (a speaker cast with a Piper voice may well speak it).
fn warn_unspoken(
    name: &str,
    members: &[CastMember],
    first_line: &[Position],
    warnings: &mut Vec<Warning>,
) {
    let kokoro: Vec<(usize, &CastMember)> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| crate::language::of_voice(&m.voice).is_some())
        .collect();
    let Some(&(first, _)) = kokoro.first() else {
        return;
    };
    let names = kokoro
        .iter()
        .map(|(_, m)| format!("`{}` ({})", m.name, m.voice))
        .collect::<Vec<_>>()
        .join(", ");
    warnings.push(Warning {
        position: first_line[first],
        message: format!(
            "the script looks written in {name}, which none of Kokoro's voices speaks: {names} \
             will read its words with their own language's sounds; add a Piper voice that \
             speaks {name} (`banter voices add NAME VOICE.onnx`) and name it in the cast header"
        ),
    });
}

/// Each speaker's own language where their lines tell one that differs from the script's
/// (`languages.script`): the stock voices' first letter (`None` for English) and the language's name.
/// A language no Kokoro voice speaks reads as English (it has no voices of its own).
fn speakers_languages(
    speakers: &[String],
    languages: &Languages,
) -> Vec<Option<(Option<char>, &'static str)>> {
    let script = match languages.script {
        Some(Written::Kokoro(l)) => Some(l.voice_prefix),
        _ => None,
    };
    speakers
        .iter()
        .map(|name| {
            let own = match languages.by_speaker.get(name.as_str())? {
                Told::Other(Written::Kokoro(l)) => (Some(l.voice_prefix), l.name),
                Told::English | Told::Other(Written::Unspoken(_)) => (None, "English"),
                Told::Unsure => return None,
            };
            (own.0 != script).then_some(own)
        })
        .collect()
}

/// Matches speakers to cast entries, casts the rest, and renames each line's speaker to the
/// cast's spelling of the name. Returns the cast and the languages its lines were read in.
pub(super) fn cast_speakers(
    file: &str,
    lines: &mut [Line],
    entries: &[CastEntry],
    characters: Option<&CharacterList>,
    settings: &crate::model::Settings,
    warnings: &mut Vec<Warning>,
) -> Result<(Cast, Languages), ScriptError> {
    let listed: HashMap<String, &CastEntry> =
        entries.iter().map(|e| (speaker_key(&e.name), e)).collect();
    let mut display: HashMap<String, usize> = HashMap::new();
    let mut speakers: Vec<String> = Vec::new();
    let mut first_line: Vec<Position> = Vec::new();
    let mut first_spelling: Vec<String> = Vec::new();
    let mut turns: Vec<usize> = Vec::new();
    let mut noticed: HashSet<String> = HashSet::new();
    let known: HashSet<String> = lines
        .iter()
        .map(|l| speaker_key(&l.speaker))
        .chain(listed.keys().cloned())
        .collect();
    for line in lines.iter_mut() {
        if let Some(name) = bracket_alias(&line.speaker, &known) {
            if noticed.insert(line.speaker.clone()) {
                warnings.push(Warning {
                    position: line.position,
                    message: format!(
                        "`{}` is taken as `{name}`, who speaks elsewhere in the script: one speaker, one voice (write the label the same way each time to silence this)",
                        line.speaker
                    ),
                });
            }
            line.speaker = name;
        }
        let key = speaker_key(&line.speaker);
        let spelling = display_name(&line.speaker);
        let index = *display.entry(key.clone()).or_insert_with(|| {
            let name = listed
                .get(&key)
                .map_or_else(|| spelling.clone(), |e| display_name(&e.name));
            speakers.push(name);
            first_line.push(line.position);
            first_spelling.push(spelling.clone());
            turns.push(0);
            speakers.len() - 1
        });
        turns[index] += 1;
        if spelling != first_spelling[index] && noticed.insert(spelling.clone()) {
            warnings.push(Warning {
                position: line.position,
                message: format!(
                    "`{spelling}` is taken as `{}` (first at {}): the names differ {}, so they are one speaker",
                    first_spelling[index],
                    first_line[index],
                    how_they_differ(&spelling, &first_spelling[index])
                ),
            });
        }
        line.speaker.clone_from(&speakers[index]);
    }
    warn_extended_names(&speakers, &turns, &first_line, warnings);
    warn_misspelled_names(&speakers, &turns, &first_line, &listed, warnings);
    let languages = Languages::of(lines);
    let language = languages.script;
    let own_languages = speakers_languages(&speakers, &languages);
    let rules = CastingRules {
        reuse_voices: settings.reuse_voices,
        any_language_voices: settings.any_language_voices,
        language: match language {
            Some(Written::Kokoro(l)) => Some(l.voice_prefix),
            _ => None,
        },
    };
    let reserved: Vec<&CastEntry> = entries.iter().collect();
    let described: Vec<Option<&str>> = speakers
        .iter()
        .map(|name| characters.and_then(|c| c.description(name)))
        .collect();
    let overrides: Vec<Speaks> = own_languages
        .iter()
        .map(|o| o.map_or(Speaks::AsScript, |(prefix, _)| Speaks::Own(prefix)))
        .collect();
    let voices = assign_voices(&speakers, &described, &overrides, &listed, &reserved, rules)
        .map_err(|out| {
            ScriptError::new(
                file,
                first_line[out.index],
                ScriptErrorKind::TooManySpeakers {
                    speaker: speakers[out.index].clone(),
                    count: out.index + 1,
                    available: out.available,
                },
            )
        })?;
    let mut members: Vec<CastMember> = speakers
        .into_iter()
        .zip(voices)
        .map(|(name, a)| CastMember {
            name,
            voice: a.voice,
            speed: a.speed,
            source: a.source,
            guess: a.guess,
        })
        .collect();
    for ((member, own), first) in members.iter().zip(&own_languages).zip(&first_line) {
        if let (Some((_, name)), VoiceSource::Automatic) = (own, member.source) {
            warnings.push(Warning {
                position: *first,
                message: format!(
                    "`{}` speaks {name} in their lines, unlike the rest of the script, so is \
                     given {} voice (`{}`); name one in a cast header to choose another",
                    member.name,
                    if name.starts_with(['A', 'E', 'I', 'O', 'U']) {
                        format!("an {name}")
                    } else {
                        format!("a {name}")
                    },
                    member.voice
                ),
            });
        }
    }
    match language {
        Some(Written::Kokoro(language)) => {
            warn_language(language, &members, &first_line, warnings);
        }
        Some(Written::Unspoken(name)) => warn_unspoken(name, &members, &first_line, warnings),
        None => {}
    }
    for entry in entries {
        if !display.contains_key(&speaker_key(&entry.name)) {
            warnings.push(Warning {
                position: entry.position,
                message: format!("`{}` is in the cast but never speaks", entry.name),
            });
            members.push(CastMember {
                name: display_name(&entry.name),
                voice: entry.voice.clone(),
                speed: entry.speed,
                source: VoiceSource::Cast {
                    position: entry.position,
                },
                guess: None,
            });
        }
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut shared: HashSet<&str> = HashSet::new();
    for m in &members {
        if let Some(other) = seen.insert(&m.voice, &m.name) {
            if !settings.reuse_voices && shared.insert(&m.voice) {
                if let VoiceSource::Cast { position } = m.source {
                    warnings.push(Warning {
                        position,
                        message: format!(
                            "`{}` and `{other}` are both cast as `{}`; listeners may not tell them apart",
                            m.name, m.voice
                        ),
                    });
                }
            }
        }
    }
    Ok((Cast { members }, languages))
}
