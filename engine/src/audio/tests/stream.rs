//! The streaming encoders: bytes flow before `finish`, and the concatenated stream decodes.

use super::{decode, expected_int, signal};
use crate::audio::*;
use std::sync::{Arc, Mutex};

/// A non-seekable writer whose bytes the test can watch while the encoder still owns it.
#[derive(Clone, Default)]
pub(super) struct Shared(pub(super) Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    pub(super) fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

#[test]
fn streams_flow_early_and_decode_when_concatenated() {
    let formats = [
        OutputFormat::Wav(SampleFormat::Pcm16),
        OutputFormat::Flac { bits: 16 },
        OutputFormat::Mp3 { kbps: 128 },
    ];
    let meta = Metadata {
        title: Some("Live".into()),
        ..Metadata::default()
    };
    for (format, rate) in formats.iter().flat_map(|&f| [(f, 24_000), (f, 48_000)]) {
        let x = signal(rate, 3 * rate as usize + 77);
        let out = Shared::default();
        let mut sink = stream_encoder(out.clone(), format, rate, &meta).unwrap();
        let header = out.len();
        let tenth = rate as usize / 10;
        sink.write(&x[..tenth]).unwrap();
        assert!(
            out.len() > header,
            "{format:?} {rate} Hz: nothing after 100 ms of audio"
        );
        for c in x[tenth..].chunks(1234) {
            sink.write(c).unwrap();
        }
        let before_finish = out.len();
        sink.finish().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        assert!(
            before_finish * 10 > bytes.len() * 9,
            "{format:?} {rate} Hz: most bytes came before finish"
        );
        let d = decode(bytes.clone(), true);
        assert_eq!(d.rate, rate);
        match format {
            OutputFormat::Wav(_) => {
                // symphonia drops the partial last packet of an unknown-length WAV (see
                // `decode`), so it checks a prefix; the data chunk is checked in full by hand
                let expect = expected_int(&x, 16);
                assert!(d.samples.len() + 4096 > expect.len());
                assert_eq!(d.samples, expect[..d.samples.len()]);
                let data: Vec<f64> = bytes[44..]
                    .chunks_exact(2)
                    .map(|b| f64::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
                    .collect();
                assert_eq!(data, expect);
            }
            OutputFormat::Flac { .. } => {
                assert_eq!(d.samples, expected_int(&x, 16), "{format:?}");
                assert_eq!(d.md5_ok, None, "a stream has no MD5 to check");
            }
            OutputFormat::Mp3 { .. } => {
                // no info frame: the decoder sees LAME's delay and padding, whole frames
                let n = x.len();
                let frame = if rate >= 32_000 { 1152 } else { 576 };
                assert_eq!(d.samples.len() % frame, 0);
                assert!(d.samples.len() >= n + 1105 && d.samples.len() < n + 1105 + frame);
            }
            OutputFormat::Opus { .. } => unreachable!("symphonia has no Opus: see opus_tests"),
        }
    }
}

#[test]
fn streaming_wav_header_has_unknown_sizes() {
    let out = Shared::default();
    let sink = stream_encoder(
        out.clone(),
        OutputFormat::Wav(SampleFormat::Pcm16),
        24_000,
        &Metadata::default(),
    )
    .unwrap();
    sink.finish().unwrap();
    let b = out.0.lock().unwrap().clone();
    assert_eq!(b.len(), 44);
    assert_eq!(&b[4..8], &[0xFF; 4]);
    assert_eq!(&b[40..44], &[0xFF; 4]);
}
