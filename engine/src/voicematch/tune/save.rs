//! Saving a tuned voice in the library, and the name it renders under.
//!
//! A tuned pack belongs to no recipe, so it cannot be registered under the blend it started
//! from (that blend must keep rendering as itself). It renders under a name of its own,
//! `<language><gender>_tuned<12 hex of the pack's hash>` (e.g. `af_tuned3f9a0c2b41de`): shaped
//! like a stock name, so the language to phonemize in and the gender come from it as for any
//! voice, but no stock voice is called so, and the synthesizer knows it only once the library
//! voice was resolved.

use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::{heaviest_stock, Tuned, CONSENT};
use crate::library::{Library, NewVoice, Tuning, Voice, VoiceKind, PACK_VERSION};
use crate::render::cache::MODEL_ID;
use crate::speaker::{ENCODER_ID, ENCODER_VERSION};
use crate::voice::{VoiceSpec, VoiceTable};
use crate::voicematch::embed::probe_key;
use crate::voicematch::VoiceMatchError;

/// The spec a tuned pack renders under (see the module docs); `start_recipe` gives its
/// language and gender.
#[must_use]
pub fn tuned_spec(start_recipe: &str, table: &VoiceTable) -> VoiceSpec {
    let prefix = VoiceSpec::parse(start_recipe)
        .ok()
        .and_then(|s| heaviest_stock(&s))
        .map_or_else(|| "af".to_owned(), |v| v.name[..2].to_owned());
    let hash = hex::encode(Sha256::digest(table.to_bytes()));
    VoiceSpec::one(format!("{prefix}_tuned{}", &hash[..12]))
}

/// Saves `tuned` as the library voice `name` (kind `tuned`), with everything about how it
/// was made, in one transaction.
pub fn save_tuned(library: &Library, name: &str, tuned: &Tuned) -> Result<Voice, VoiceMatchError> {
    let spec = VoiceSpec::parse(&tuned.start_recipe).map_err(crate::speech::SynthError::from)?;
    let heaviest = heaviest_stock(&spec);
    let clip_names: Vec<String> = tuned
        .target
        .clips
        .iter()
        .map(|c| {
            c.path.file_name().map_or_else(
                || c.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let table_hash = crate::library::RenderKey::voice_table_hash(&tuned.table);
    let provenance = format!(
        "Tuned (not cloned) by Banter {} on {} toward the speaker of {} ({:.0} s of speech), \
         starting from {}; held-out similarity {:.3} (the blend: {:.3}). {CONSENT}",
        env!("CARGO_PKG_VERSION"),
        MODEL_ID,
        clip_names.join(", "),
        tuned
            .target
            .clips
            .iter()
            .map(|c| c.speech_secs)
            .sum::<f64>(),
        tuned.start_recipe,
        tuned.after,
        tuned.before,
    );
    let history = serde_json::to_string(&tuned.history).unwrap_or_else(|_| "[]".into());
    let tuning = Tuning {
        pack_version: PACK_VERSION,
        pack_sha256: String::new(),
        start_recipe: tuned.start_recipe.clone(),
        clip_hashes: tuned.target.clips.iter().map(|c| c.hash.clone()).collect(),
        encoder: ENCODER_ID.to_owned(),
        encoder_version: ENCODER_VERSION,
        embedding_keys: vec![probe_key(&table_hash, tuned.language.espeak_code()).audio_hash],
        settings_json: tuned.settings.to_string(),
        history_json: history,
        before_similarity: tuned.before,
        heldout_similarity: tuned.after,
        stability: tuned.stability,
        provenance,
        created_at: SystemTime::now(),
    };
    let voice = NewVoice {
        name: name.to_owned(),
        kind: VoiceKind::Tuned,
        language: Some(tuned.language),
        gender: heaviest.map(|v| v.gender),
        recipe: Some(tuned.start_recipe.clone()),
        style: None,
        notes: format!(
            "tuned toward {} (held-out similarity {:.3}, the blend {:.3}); tuned, not cloned",
            clip_names.join(", "),
            tuned.after,
            tuned.before
        ),
    };
    Ok(library.add_tuned_voice(&voice, &tuned.table, &tuning)?)
}
