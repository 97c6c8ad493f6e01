//! [`CpalOut`]: playback on a real output device through cpal. The stream lives on its
//! [`Supervisor`]'s thread, which feeds it and reopens the default device if this one goes
//! away; the stream is opened in the best sample format the device offers
//! ([`super::convert::pick_config`]).

use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use engine::SAMPLE_RATE;

use super::convert::{pick_config, Linear, OutSample};
use super::supervise::{Opener, Retry, Supervisor};
use super::{AudioOut, AudioOutError, DeviceNews, PlayBuffer, Player};

/// An output device through cpal (the default one, or one chosen by name).
pub struct CpalOut {
    device: cpal::Device,
    name: String,
    supervisor: Option<Supervisor>,
}

impl CpalOut {
    /// Opens the default output device, or says why there is none.
    pub fn open_default() -> Result<Self, AudioOutError> {
        let device = default_device()?;
        let name = device
            .description()
            .map_or_else(|_| "default output".to_owned(), |d| d.name().to_owned());
        Ok(Self {
            device,
            name,
            supervisor: None,
        })
    }

    /// The output devices' names, the default first.
    pub fn output_names() -> Result<Vec<String>, AudioOutError> {
        let host = cpal::default_host();
        let default = host.default_output_device().map(|d| device_name(&d));
        let devices = host.output_devices().map_err(|e| AudioOutError::Open {
            device: "output devices".into(),
            reason: e.to_string(),
        })?;
        let mut names: Vec<String> = default.iter().cloned().collect();
        for d in devices {
            let n = device_name(&d);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        Ok(names)
    }

    /// Opens the output device called `name`.
    pub fn open_named(name: &str) -> Result<Self, AudioOutError> {
        let host = cpal::default_host();
        let devices = host.output_devices().map_err(|e| AudioOutError::Open {
            device: name.to_owned(),
            reason: e.to_string(),
        })?;
        for device in devices {
            if device_name(&device) == name {
                return Ok(Self {
                    device,
                    name: name.to_owned(),
                    supervisor: None,
                });
            }
        }
        Err(AudioOutError::Open {
            device: name.to_owned(),
            reason: "it is no longer connected".into(),
        })
    }
}

/// The host's default output device, or why there is none.
fn default_device() -> Result<cpal::Device, AudioOutError> {
    let host = cpal::default_host();
    host.default_output_device()
        .ok_or_else(|| AudioOutError::NoDevice {
            host: host.id().name().to_owned(),
        })
}

fn device_name(device: &cpal::Device) -> String {
    device
        .description()
        .map_or_else(|_| "unnamed output".to_owned(), |d| d.name().to_owned())
}

impl AudioOut for CpalOut {
    fn describe(&self) -> String {
        self.supervisor
            .as_ref()
            .map_or_else(|| self.name.clone(), Supervisor::device)
    }

    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        self.supervisor = None;
        let opener = CpalOpener {
            first: Some((self.device.clone(), self.name.clone())),
        };
        self.supervisor = Some(Supervisor::start(opener, buffer, Retry::DEFAULT)?);
        Ok(())
    }

    fn news(&mut self) -> Option<DeviceNews> {
        self.supervisor.as_ref()?.news()
    }
}

/// Opens the chosen device first, the default device after that.
struct CpalOpener {
    first: Option<(cpal::Device, String)>,
}

impl Opener for CpalOpener {
    type Stream = cpal::Stream;

    fn open(
        &mut self,
        player: Player,
        faults: SyncSender<cpal::Error>,
    ) -> Result<(cpal::Stream, String), AudioOutError> {
        let (device, name) = if let Some(first) = self.first.take() {
            first
        } else {
            let device = default_device()?;
            let name = device_name(&device);
            (device, name)
        };
        let stream =
            open_stream(&device, player, faults).map_err(|reason| AudioOutError::Open {
                device: name.clone(),
                reason: reason.to_string(),
            })?;
        Ok((stream, name))
    }
}

/// Builds and starts a stream on `device` in the best format it offers.
fn open_stream(
    device: &cpal::Device,
    player: Player,
    faults: SyncSender<cpal::Error>,
) -> Result<cpal::Stream, StreamError> {
    let ranges: Vec<_> = device.supported_output_configs()?.collect();
    let default = device.default_output_config().ok();
    let config = pick_config(&ranges, default.as_ref()).ok_or(StreamError::NoSampleFormat)?;
    let format = config.sample_format();
    let stream = match format {
        cpal::SampleFormat::F32 => build::<f32>(device, config, player, faults),
        cpal::SampleFormat::I16 => build::<i16>(device, config, player, faults),
        cpal::SampleFormat::U16 => build::<u16>(device, config, player, faults),
        other => return Err(StreamError::Unsupported(other)),
    }?;
    stream.play()?;
    Ok(stream)
}

/// Why a stream could not be opened on a device (the reason in [`AudioOutError::Open`]).
#[derive(Debug, thiserror::Error)]
enum StreamError {
    #[error("it offers none of f32, i16 or u16 samples")]
    NoSampleFormat,
    #[error("{0} samples are not supported")]
    Unsupported(cpal::SampleFormat),
    #[error(transparent)]
    Cpal(#[from] cpal::Error),
}

fn build<T: OutSample + cpal::SizedSample>(
    device: &cpal::Device,
    config: cpal::SupportedStreamConfig,
    mut player: Player,
    faults: SyncSender<cpal::Error>,
) -> Result<cpal::Stream, cpal::Error> {
    let channels = usize::from(config.channels()).max(1);
    let mut resampler = Linear::new(SAMPLE_RATE, config.sample_rate());
    device.build_output_stream(
        config.into(),
        move |data: &mut [T], _: &cpal::OutputCallbackInfo| {
            resampler.fill(&mut player, data, channels);
        },
        move |e| {
            // Never blocks: the supervisor's thread decides what the error means.
            let _ = faults.try_send(e);
        },
        None,
    )
}
