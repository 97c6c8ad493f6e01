//! Sound cues written in a script: `[sound: FILE]` (a one-shot: a stinger, a door, the intro)
//! and `[bed: FILE]` (music under the lines that follow, until `[bed: off]` or the next bed).
//!
//! Why the parser reads them: the author writes the whole episode in one file, sound included,
//! and every mistake in a cue (a bad option, a misspelt key) should surface with its
//! `FILE:LINE:COLUMN` before minutes of rendering, like any other script error. The parser stays
//! pure: it records the file name as written and where it was written; the engine resolves it
//! against the script's folder, decodes it and reports a missing or unreadable file at the same
//! place ([`SoundCue::position`]).
//!
//! A bracket is a cue only when it names a file: `[sound: door.wav]`, or options after a name.
//! `[Sound: the wind howls]` names none and stays a stage direction, as it always was, so no
//! existing script changes meaning. A file in a format Banter cannot play (`.wma`, `.caf`) is an
//! error that says so, never a direction in silence.

use serde::Serialize;

/// Longest fade a cue may ask for, in seconds.
pub const MAX_FADE_SECS: f32 = 30.0;
/// Longest overlap a sound may ask for, in seconds.
pub const MAX_OVERLAP_SECS: f32 = 60.0;
/// The volume range a cue may ask for, in dB (0 dB plays the file as it is).
pub const VOLUME_RANGE_DB: std::ops::RangeInclusive<f32> = -60.0..=12.0;
/// The deepest ducking a bed may ask for, in dB.
pub const MAX_DUCK_DB: f32 = 40.0;

/// A sound's default fade in and out: a few milliseconds, enough to never click.
pub const SOUND_FADE_SECS: f32 = 0.01;
/// A bed's default fade in, out and crossfade.
pub const BED_FADE_SECS: f32 = 2.0;
/// A bed's default level: music mastered for listening sits well under speech.
pub const BED_VOLUME_DB: f32 = -15.0;
/// How far a bed drops under speech unless its cue says otherwise.
pub const BED_DUCK_DB: f32 = 12.0;

/// The extensions of the files Banter plays (the decoder sniffs the content; these only say
/// that a bracket names a file at all).
const PLAYABLE: [&str; 11] = [
    "wav", "flac", "mp3", "ogg", "oga", "opus", "m4a", "aac", "mp4", "aif", "aiff",
];
/// Audio files an author may name that Banter cannot decode: an error, not a direction.
const UNPLAYABLE: [&str; 4] = ["wma", "caf", "ape", "amr"];

/// A cue, where it was written, and whether it stands alone on its line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoundCue {
    pub action: CueAction,
    /// Where its `[` is: what a missing or unreadable file is reported at.
    pub position: super::Position,
    /// On a line of its own: speech waits for a sound (less its overlap). Written among the
    /// words of a turn, a cue plays at the next word's time and speech goes on.
    pub alone: bool,
}

/// What a cue does.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CueAction {
    /// `[sound: FILE]`: play the file once.
    Sound {
        /// As written, relative to the script's folder.
        file: String,
        volume_db: f32,
        fade_secs: f32,
        /// Speech after a sound on its own line starts this long before the sound ends.
        overlap_secs: f32,
    },
    /// `[bed: FILE]`: loop or trim the file under what follows.
    Bed {
        file: String,
        volume_db: f32,
        fade_secs: f32,
        /// How far the bed drops under speech.
        duck_db: f32,
    },
    /// `[bed: off]`: fade the bed out.
    BedOff { fade_secs: f32 },
}

impl CueAction {
    /// The file the cue plays, if it plays one.
    #[must_use]
    pub fn file(&self) -> Option<&str> {
        match self {
            Self::Sound { file, .. } | Self::Bed { file, .. } => Some(file),
            Self::BedOff { .. } => None,
        }
    }
}

/// Why a cue cannot be read, and the character (from the start of the bracket's inside) it
/// points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CueError {
    pub offset: usize,
    pub reason: String,
}

/// Reads the inside of a bracket (`sound: door.wav volume=-6dB`): `None` when it is not a cue
/// (another key, or a sound that names no file), else the cue or what is wrong with it.
pub(crate) fn parse_cue(inner: &str) -> Option<Result<CueAction, CueError>> {
    let (key, value) = inner.split_once(':')?;
    let key = key.trim().to_ascii_lowercase();
    if key != "sound" && key != "bed" {
        return misnamed(&key, value);
    }
    // Character offset of `value` inside the bracket.
    let value_at = key_len(inner) + 1;
    let words = split_words(value);
    let first_option = words
        .iter()
        .position(|w| w.text.contains('='))
        .unwrap_or(words.len());
    let (name_words, options) = words.split_at(first_option);
    let name = name_words
        .iter()
        .map(|w| w.text)
        .collect::<Vec<_>>()
        .join(" ");
    let name = name.trim_matches(|c| c == '"' || c == '\'').trim();
    let name_at = value_at + words.first().map_or(0, |w| w.offset);
    if key == "bed" && name.eq_ignore_ascii_case("off") {
        return Some(bed_off(options, value_at));
    }
    let extension = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .filter(|e| !e.contains(['/', '\\', ' ']));
    let playable = extension.as_deref().is_some_and(|e| PLAYABLE.contains(&e));
    if let Some(e) = extension.as_deref().filter(|e| UNPLAYABLE.contains(e)) {
        return Some(Err(err(
            name_at,
            format!("`{name}` is a .{e} file, which Banter cannot play; convert it to WAV, FLAC, MP3, M4A (AAC or ALAC), AIFF, Ogg Vorbis or Ogg Opus"),
        )));
    }
    if !playable && options.is_empty() {
        return None; // `[Sound: the wind howls]`: a direction, as it always was
    }
    if name.is_empty() {
        return Some(Err(err(
            value_at,
            format!("name the file to play, such as `[{key}: music/theme.mp3]`"),
        )));
    }
    if !playable {
        return Some(Err(err(
            name_at,
            format!("`{name}` is not an audio file Banter plays; name a .wav, .flac, .mp3, .ogg or .opus file"),
        )));
    }
    let file = name.to_owned();
    Some(if key == "sound" {
        sound_options(file, options, value_at)
    } else {
        bed_options(file, options, value_at)
    })
}

/// `[music: theme.mp3]`, `[sfx: door.wav]`: a one-word key Banter does not know before the
/// name of a file it would play. Read as a stage direction, the file would silently not play:
/// an error that names the two cues instead. (`[Music: fades out]` names no file: a direction.)
fn misnamed(key: &str, value: &str) -> Option<Result<CueAction, CueError>> {
    // The caller names the bracket: "`[music: theme.mp3]` is not a sound cue Banter can play".
    let file = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let one_word = !key.is_empty() && key.len() <= 12 && key.chars().all(char::is_alphabetic);
    let extension = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let audio = extension.is_some_and(|e| PLAYABLE.contains(&e.as_str()))
        && !file.contains(char::is_whitespace);
    (one_word && audio).then(|| {
        Err(err(
            0,
            format!(
                "write `[sound: {file}]` to play it once, or `[bed: {file}]` to play it under what \
                 follows"
            ),
        ))
    })
}

fn bed_off(options: &[Word<'_>], value_at: usize) -> Result<CueAction, CueError> {
    let mut fade_secs = BED_FADE_SECS;
    for w in options {
        let (k, v) = option(w.text);
        let at = value_at + w.offset;
        match k.as_str() {
            "fade" => fade_secs = seconds(v, MAX_FADE_SECS, "fade").map_err(|r| err(at, r))?,
            _ => return Err(err(at, unknown(&k, "`[bed: off]`", "fade"))),
        }
    }
    Ok(CueAction::BedOff { fade_secs })
}

fn sound_options(
    file: String,
    options: &[Word<'_>],
    value_at: usize,
) -> Result<CueAction, CueError> {
    let (mut volume_db, mut fade_secs, mut overlap_secs) = (0.0, SOUND_FADE_SECS, 0.0);
    for w in options {
        let (k, v) = option(w.text);
        let at = value_at + w.offset;
        match k.as_str() {
            "volume" | "vol" | "gain" => volume_db = decibels(v).map_err(|r| err(at, r))?,
            "fade" => fade_secs = seconds(v, MAX_FADE_SECS, "fade").map_err(|r| err(at, r))?,
            "overlap" => {
                overlap_secs = seconds(v, MAX_OVERLAP_SECS, "overlap").map_err(|r| err(at, r))?;
            }
            "duck" => {
                return Err(err(
                    at,
                    "`duck` is for beds: a sound plays over speech as it is; lower it with `volume=-6dB`".to_owned(),
                ))
            }
            _ => return Err(err(at, unknown(&k, "a sound", "overlap, volume and fade"))),
        }
    }
    Ok(CueAction::Sound {
        file,
        volume_db,
        fade_secs,
        overlap_secs,
    })
}

fn bed_options(file: String, options: &[Word<'_>], value_at: usize) -> Result<CueAction, CueError> {
    let (mut volume_db, mut fade_secs, mut duck_db) = (BED_VOLUME_DB, BED_FADE_SECS, BED_DUCK_DB);
    for w in options {
        let (k, v) = option(w.text);
        let at = value_at + w.offset;
        match k.as_str() {
            "volume" | "vol" | "gain" => volume_db = decibels(v).map_err(|r| err(at, r))?,
            "fade" => fade_secs = seconds(v, MAX_FADE_SECS, "fade").map_err(|r| err(at, r))?,
            "duck" => duck_db = duck(v).map_err(|r| err(at, r))?,
            "overlap" => {
                return Err(err(
                    at,
                    "`overlap` is for sounds: speech never waits for a bed".to_owned(),
                ))
            }
            _ => return Err(err(at, unknown(&k, "a bed", "volume, fade and duck"))),
        }
    }
    Ok(CueAction::Bed {
        file,
        volume_db,
        fade_secs,
        duck_db,
    })
}

fn err(offset: usize, reason: String) -> CueError {
    CueError { offset, reason }
}

fn unknown(key: &str, what: &str, known: &str) -> String {
    format!("`{key}` is not an option of {what}; it takes {known}")
}

/// Characters in the key and the spaces before the colon.
fn key_len(inner: &str) -> usize {
    inner.split_once(':').map_or(0, |(k, _)| k.chars().count())
}

/// A word of a cue's value and its character offset in the value.
struct Word<'a> {
    text: &'a str,
    offset: usize,
}

/// Words separated by whitespace or commas (`door.wav, volume=-6dB`).
fn split_words(value: &str) -> Vec<Word<'_>> {
    let mut words = Vec::new();
    let mut start: Option<(usize, usize)> = None; // byte, char
    for (chars, (byte, c)) in value.char_indices().enumerate() {
        let sep = c.is_whitespace() || c == ',';
        match (sep, start) {
            (true, Some((b, k))) => {
                words.push(Word {
                    text: &value[b..byte],
                    offset: k,
                });
                start = None;
            }
            (false, None) => start = Some((byte, chars)),
            _ => {}
        }
    }
    if let Some((b, k)) = start {
        words.push(Word {
            text: &value[b..],
            offset: k,
        });
    }
    words
}

/// `Volume=-6dB` → (`volume`, `-6dB`).
fn option(word: &str) -> (String, &str) {
    let (k, v) = word.split_once('=').unwrap_or((word, ""));
    (k.trim().to_ascii_lowercase(), v.trim())
}

/// `2s`, `500ms`, `2` → seconds, from 0 to `max`.
fn seconds(value: &str, max: f32, what: &str) -> Result<f32, String> {
    crate::pieces::seconds_up_to(value, max).ok_or_else(|| {
        format!("`{what}={value}`: write a time from 0 to {max} s, such as `{what}=2s` or `{what}=500ms`")
    })
}

/// `-18dB`, `-18 db`, `-18` → dB, within [`VOLUME_RANGE_DB`].
fn decibels(value: &str) -> Result<f32, String> {
    let v = value.to_ascii_lowercase();
    let number = v.strip_suffix("db").unwrap_or(&v).trim();
    match number.parse::<f32>() {
        Ok(x) if VOLUME_RANGE_DB.contains(&x) => Ok(x),
        _ => Err(format!(
            "`volume={value}`: write a level from {} to +{} dB, such as `volume=-18dB`",
            VOLUME_RANGE_DB.start(),
            VOLUME_RANGE_DB.end()
        )),
    }
}

/// `12dB` (also `-12dB`: the drop is the same) → dB, up to [`MAX_DUCK_DB`].
fn duck(value: &str) -> Result<f32, String> {
    let v = value.to_ascii_lowercase();
    let number = v.strip_suffix("db").unwrap_or(&v).trim();
    match number.parse::<f32>().map(f32::abs) {
        Ok(x) if x <= MAX_DUCK_DB => Ok(x),
        _ => Err(format!(
            "`duck={value}`: write how far the bed drops under speech, from 0 to {MAX_DUCK_DB} dB, such as `duck=12dB`"
        )),
    }
}

/// The inside of a line that is one cue and nothing else (`[sound: sting.wav]`), for the
/// layouts that read a line at a time; `None` for any other line, a stage direction included.
pub(crate) fn whole_line_cue(trimmed: &str) -> Option<&str> {
    let inner = trimmed.strip_prefix('[')?.strip_suffix(']')?;
    (!inner.contains(['[', ']']) && parse_cue(inner).is_some()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(inner: &str) -> CueAction {
        parse_cue(inner).expect("a cue").expect("valid")
    }

    fn bad(inner: &str) -> CueError {
        parse_cue(inner).expect("a cue").expect_err("invalid")
    }

    #[test]
    fn another_key_before_an_audio_file_is_an_error_naming_both_cues() {
        for inner in ["music: theme.mp3", "SFX: \"door.wav\"", "jingle:intro.ogg"] {
            let e = bad(inner);
            assert!(
                e.reason.contains("[sound: ") && e.reason.contains("[bed: "),
                "{inner}: {}",
                e.reason
            );
        }
        // Directions as before: no file, more than one word, or a file that is not audio.
        for inner in [
            "Music: fades out",
            "Sound effects: door.wav",
            "Note: see notes.txt",
        ] {
            assert!(parse_cue(inner).is_none(), "{inner}");
        }
    }

    #[test]
    fn sounds_and_beds_with_their_options() {
        assert_eq!(
            ok("sound: sfx/door.wav"),
            CueAction::Sound {
                file: "sfx/door.wav".into(),
                volume_db: 0.0,
                fade_secs: SOUND_FADE_SECS,
                overlap_secs: 0.0
            }
        );
        assert_eq!(
            ok("Sound: intro theme.MP3, overlap=2s volume=-6dB fade=500ms"),
            CueAction::Sound {
                file: "intro theme.MP3".into(),
                volume_db: -6.0,
                fade_secs: 0.5,
                overlap_secs: 2.0
            }
        );
        assert_eq!(
            ok("bed: \"music/bed.ogg\" volume=-18dB fade=3 duck=-9dB"),
            CueAction::Bed {
                file: "music/bed.ogg".into(),
                volume_db: -18.0,
                fade_secs: 3.0,
                duck_db: 9.0
            }
        );
        assert_eq!(
            ok("bed: theme.flac"),
            CueAction::Bed {
                file: "theme.flac".into(),
                volume_db: BED_VOLUME_DB,
                fade_secs: BED_FADE_SECS,
                duck_db: BED_DUCK_DB
            }
        );
        assert_eq!(ok("bed: OFF"), CueAction::BedOff { fade_secs: 2.0 });
        assert_eq!(ok("bed: off fade=4s"), CueAction::BedOff { fade_secs: 4.0 });
    }

    #[test]
    fn a_sound_that_names_no_file_is_not_a_cue() {
        assert_eq!(parse_cue("Sound: the wind howls"), None);
        assert_eq!(parse_cue("sound: door"), None);
        assert_eq!(parse_cue("pause: 2s"), None);
        assert_eq!(parse_cue("Enter Lane."), None);
        assert_eq!(whole_line_cue("[sound: a.wav]"), Some("sound: a.wav"));
        assert_eq!(whole_line_cue("[sound: the door]"), None);
        assert_eq!(whole_line_cue("[sound: a.wav] and more"), None);
    }

    #[test]
    fn mistakes_point_at_their_option() {
        // `sound: door.wav volume=loud`: the option starts at character 16 of the inside.
        let e = bad("sound: door.wav volume=loud");
        assert_eq!(e.offset, 16);
        assert!(e.reason.contains("volume=loud"), "{}", e.reason);
        let e = bad("sound: door.wav  duck=6dB");
        assert_eq!(e.offset, 17);
        assert!(e.reason.contains("for beds"), "{}", e.reason);
        let e = bad("bed: a.mp3 overlap=1s");
        assert!(e.reason.contains("for sounds"), "{}", e.reason);
        let e = bad("bed: a.mp3 loop=yes");
        assert!(
            e.reason.contains("`loop` is not an option of a bed"),
            "{}",
            e.reason
        );
        assert!(bad("bed: a.mp3 fade=31s").reason.contains("from 0 to 30"));
        assert!(bad("bed: a.mp3 duck=50dB").reason.contains("from 0 to 40"));
        assert!(bad("sound: a.wav volume=+20dB").reason.contains("-60"));
        assert!(bad("bed: off volume=-3dB").reason.contains("takes fade"));
        let e = bad("sound: voice memo.wma");
        assert_eq!(e.offset, 7);
        assert!(e.reason.contains(".wma file"), "{}", e.reason);
        assert!(bad("sound: notes.txt volume=-3dB")
            .reason
            .contains("not an audio file"));
        assert!(bad("sound: volume=-3dB").reason.contains("name the file"));
    }
}
