//! From the studio's 24 kHz mono f32 to what the device takes: its rate (linear interpolation,
//! good enough for monitoring; exports use the engine's resampler), its channel count, and its
//! sample format. Devices that offer no f32 stream (some ALSA hardware, USB DACs) take i16 or
//! u16, so the format is chosen from what the device offers: f32, else i16, else u16.

use cpal::{SampleFormat, SupportedStreamConfig, SupportedStreamConfigRange};

use super::player::Player;

/// A device sample made from an f32 in -1..=1 (louder is clipped).
pub(crate) trait OutSample: Copy {
    fn from_f32(s: f32) -> Self;
}

impl OutSample for f32 {
    fn from_f32(s: f32) -> Self {
        s
    }
}

impl OutSample for i16 {
    fn from_f32(s: f32) -> Self {
        // Full scale is 32768, as cpal reads i16 back; NaN becomes 0.
        (s * 32_768.0).round().clamp(-32_768.0, 32_767.0) as i16
    }
}

impl OutSample for u16 {
    fn from_f32(s: f32) -> Self {
        // The same steps as i16, with silence at 32768.
        (i16::from_f32(s) as u16) ^ 0x8000
    }
}

/// The formats the studio can write, best first.
pub(crate) const FORMATS: [SampleFormat; 3] =
    [SampleFormat::F32, SampleFormat::I16, SampleFormat::U16];

/// The stream to open: the device's default when its format is the best offered, else the best
/// format at the default's channel count and rate where the device allows them.
pub(crate) fn pick_config(
    ranges: &[SupportedStreamConfigRange],
    default: Option<&SupportedStreamConfig>,
) -> Option<SupportedStreamConfig> {
    let offered = |f: SampleFormat| {
        ranges.iter().any(|r| r.sample_format() == f)
            || default.is_some_and(|d| d.sample_format() == f)
    };
    let format = FORMATS.into_iter().find(|&f| offered(f))?;
    if let Some(d) = default.filter(|d| d.sample_format() == format) {
        return Some(*d);
    }
    let mut candidates: Vec<&SupportedStreamConfigRange> = ranges
        .iter()
        .filter(|r| r.sample_format() == format)
        .collect();
    if let Some(d) = default {
        // Prefer the default's channel count, then its rate.
        candidates.sort_by_key(|r| {
            (
                r.channels() != d.channels(),
                !r.contains_rate(d.sample_rate()),
            )
        });
    }
    let range = **candidates.first()?;
    default
        .and_then(|d| range.try_with_sample_rate(d.sample_rate()))
        .or_else(|| range.try_with_standard_sample_rate())
        .or_else(|| Some(range.with_max_sample_rate()))
}

/// The device callback's work: pull from the [`Player`], change the rate, fill every channel.
/// A fixed scratch block, so the callback never allocates.
pub(crate) struct Linear {
    step: f64,
    frac: f64,
    prev: f32,
    next: f32,
    /// Small, so little old audio plays on after a seek or pause.
    scratch: [f32; 128],
    have: usize,
    at: usize,
}

impl Linear {
    pub(crate) fn new(from: u32, to: u32) -> Self {
        Self {
            step: f64::from(from) / f64::from(to.max(1)),
            frac: 0.0,
            prev: 0.0,
            next: 0.0,
            scratch: [0.0; 128],
            have: 0,
            at: 0,
        }
    }

    fn source_sample(&mut self, player: &mut Player) -> f32 {
        if self.at >= self.have {
            // Nothing there: one sample of silence, and ask again next time.
            self.have = player.read(&mut self.scratch).max(1);
            self.at = 0;
        }
        let s = self.scratch[self.at];
        self.at += 1;
        s
    }

    /// Fills interleaved `data` with `channels` channels.
    pub(crate) fn fill<T: OutSample>(
        &mut self,
        player: &mut Player,
        data: &mut [T],
        channels: usize,
    ) {
        for frame in data.chunks_mut(channels.max(1)) {
            while self.frac >= 1.0 {
                self.prev = self.next;
                self.next = self.source_sample(player);
                self.frac -= 1.0;
            }
            let s = self.prev + (self.next - self.prev) * self.frac as f32;
            frame.fill(T::from_f32(s));
            self.frac += self.step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::PlayBuffer;
    use cpal::SupportedBufferSize;

    #[test]
    fn i16_and_u16_take_known_samples_to_known_values() {
        let cases: [(f32, i16, u16); 8] = [
            (0.0, 0, 32_768),
            (0.5, 16_384, 49_152),
            (-0.5, -16_384, 16_384),
            (1.0, 32_767, 65_535),
            (-1.0, -32_768, 0),
            (2.0, 32_767, 65_535),
            (-3.0, -32_768, 0),
            (1.0 / 32_768.0, 1, 32_769),
        ];
        for (s, i, u) in cases {
            assert_eq!(i16::from_f32(s), i, "{s} as i16");
            assert_eq!(u16::from_f32(s), u, "{s} as u16");
        }
        assert_eq!(i16::from_f32(f32::NAN), 0);
    }

    #[test]
    fn silence_is_the_middle_of_u16_and_playback_fills_every_channel() {
        let buf = PlayBuffer::new();
        let mut player = buf.connect();
        buf.append(&[0.5; 64]);
        buf.feed();
        let mut r = Linear::new(24_000, 24_000);
        let mut data = [0u16; 8];
        r.fill(&mut player, &mut data, 2);
        assert_eq!(data, [32_768; 8], "paused: silence");
        buf.set_playing(true);
        let mut data = [0i16; 8];
        r.fill(&mut player, &mut data, 2);
        assert_eq!(data[6..], [16_384, 16_384], "both channels: {data:?}");
    }

    #[test]
    fn linear_resampler_doubles_the_rate() {
        let buf = PlayBuffer::new();
        let mut player = buf.connect();
        buf.append(&[0.0, 1.0, 0.0, 1.0]);
        buf.set_playing(true);
        buf.feed();
        let mut r = Linear::new(24_000, 48_000);
        let mut data = [0.0f32; 8];
        r.fill(&mut player, &mut data, 1);
        // Interpolated half-way points appear between source samples.
        assert!(data.iter().any(|&s| (s - 0.5).abs() < 1e-6), "{data:?}");
    }

    fn range(
        format: SampleFormat,
        channels: u16,
        min: u32,
        max: u32,
    ) -> SupportedStreamConfigRange {
        SupportedStreamConfigRange::new(channels, min, max, SupportedBufferSize::Unknown, format)
    }

    #[test]
    fn picks_f32_then_i16_then_u16_at_the_default_rate() {
        let u16_only = [range(SampleFormat::U16, 2, 8_000, 96_000)];
        let both = [
            range(SampleFormat::U16, 2, 8_000, 96_000),
            range(SampleFormat::I16, 6, 8_000, 96_000),
            range(SampleFormat::I16, 2, 8_000, 96_000),
        ];
        let default =
            SupportedStreamConfig::new(2, 44_100, SupportedBufferSize::Unknown, SampleFormat::U16);
        let c = pick_config(&u16_only, Some(&default)).expect("u16");
        assert_eq!(
            (c.sample_format(), c.sample_rate()),
            (SampleFormat::U16, 44_100)
        );
        let c = pick_config(&both, Some(&default)).expect("i16");
        assert_eq!(
            (c.sample_format(), c.channels(), c.sample_rate()),
            (SampleFormat::I16, 2, 44_100)
        );
        let c = pick_config(&both, None).expect("i16 without a default");
        assert_eq!(
            (c.sample_format(), c.sample_rate()),
            (SampleFormat::I16, 48_000)
        );
        let mut with_f32 = both.to_vec();
        with_f32.push(range(SampleFormat::F32, 2, 48_000, 48_000));
        let c = pick_config(&with_f32, Some(&default)).expect("f32");
        assert_eq!(
            (c.sample_format(), c.sample_rate()),
            (SampleFormat::F32, 48_000)
        );
        assert!(pick_config(&[range(SampleFormat::I24, 2, 8_000, 96_000)], None).is_none());
    }
}
