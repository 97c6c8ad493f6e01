//! Production cues written as labels in audio-drama scripts (`SFX:`, `MUSIC:`): directions
//! for whoever mixes the episode, never speakers.

/// Production cues written as labels in audio-drama scripts (`SFX: door slams`, `MUSIC: up
/// and under`): directions for the sound designer, never a speaker.
pub(crate) fn is_sound_cue(name: &str) -> bool {
    const CUES: [&str; 16] = [
        "sfx",
        "fx",
        "sound",
        "sound effect",
        "sound effects",
        "sound fx",
        "music",
        "music cue",
        "music in",
        "music out",
        "ambience",
        "ambiance",
        "atmos",
        "atmosphere",
        "grams",
        "cue",
    ];
    CUES.contains(&name.trim().to_lowercase().as_str())
}
