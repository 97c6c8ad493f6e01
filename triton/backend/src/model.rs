//! The model `banter` as Triton loads it: its configuration read once, shared by its instances.
//!
//! The store is resolved here and its files checked, so a wrong `model_store` fails the model's
//! load with the path in the message, before any instance starts a model thread.

use engine::assets::ModelStore;

use crate::config::ModelConfig;
use crate::ffi::{self, Model};
use crate::Failure;

/// What every instance of the model needs.
#[derive(Debug)]
pub struct ModelState {
    pub config: ModelConfig,
    pub store: ModelStore,
}

impl ModelState {
    /// Reads and checks the model's configuration.
    pub fn initialize(model: Model) -> Result<Box<Self>, Failure> {
        let config = ModelConfig::from_json(&model.config_json()?)?;
        let store = match &config.model_store {
            Some(dir) => ModelStore::at(dir),
            None => ModelStore::open_default().map_err(|e| {
                Failure::invalid(format!(
                    "no `model_store` parameter and no default store: {e}"
                ))
            })?,
        };
        if !store.is_ready() {
            return Err(Failure::new(
                ffi::Code::NotFound,
                format!(
                    "the Banter model store {} is missing or incomplete; run `banter models \
                     fetch` (with BANTER_MODEL_DIR set to it) or point `model_store` at a \
                     fetched one",
                    store.root().display()
                ),
            ));
        }
        if let Some(precision) = &config.precision {
            // The engine reads its precision from the environment when a model thread loads
            // Kokoro; instances load after this, on Triton's loading threads.
            std::env::set_var(engine::Precision::ENV, precision);
        }
        ffi::log_info(&format!(
            "banter: model store {}, precision {}",
            store.root().display(),
            config.precision.as_deref().unwrap_or("default")
        ));
        Ok(Box::new(Self { config, store }))
    }
}
