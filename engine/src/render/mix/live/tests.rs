//! The live mix against the export's: fed as a walk places things, it gives out the same
//! samples the export's tracks hold, and passes speech straight through when nothing plays.

use std::path::Path;

use super::*;
use crate::audio::{write_wav_file, SampleFormat};
use crate::render::mix::bed::BedEvent;
use crate::render::mix::sfx::SoundEvent;
use crate::render::mix::{open_file, resolve};
use crate::render::plan_episode;
use crate::script::ParseOptions;

const RATE: u64 = SAMPLE_RATE as u64;

fn secs(s: f64) -> u64 {
    (s * RATE as f64) as u64
}

fn tone(dir: &Path, name: &str, secs: f32, hz: f32) {
    let rate = 44_100;
    let n = (secs * rate as f32) as usize;
    let samples: Vec<f32> = (0..n)
        .map(|k| (std::f32::consts::TAU * hz * k as f32 / rate as f32).sin() * 0.4)
        .collect();
    write_wav_file(&dir.join(name), &samples, rate, SampleFormat::Pcm16).expect("wav");
}

/// An episode with a bed, a sound between turns and the bed turned off, its files resolved.
fn episode(dir: &Path) -> (Episode, SoundFiles, Vec<SoundMark>) {
    tone(dir, "bed.wav", 1.3, 220.0);
    tone(dir, "sting.wav", 0.6, 880.0);
    let text = "[bed: bed.wav fade=0.5s]\nAnn: Hello there.\n[sound: sting.wav]\nAnn: Bye.\n[bed: off fade=0.5s]\n";
    let episode = Episode::parse("ep.txt", text, &ParseOptions::default()).expect("parses");
    let mut plans = plan_episode(&episode).expect("plans");
    let files = resolve(&mut plans, &episode, dir, &mut Vec::new()).expect("resolves");
    let cues: Vec<_> = episode
        .sounds()
        .map(|(line, c)| (line, c.clone()))
        .collect();
    let marks = [0.0, 3.2, 7.0]
        .iter()
        .zip(cues)
        .map(|(at, (line, cue))| SoundMark {
            cue,
            at: secs(*at),
            line,
        })
        .collect();
    (episode, files, marks)
}

#[test]
fn fed_as_the_walk_places_it_the_live_mix_is_the_exports_mix() {
    let dir = tempfile::tempdir().expect("dir");
    let (episode, files, marks) = episode(dir.path());
    let speech = [secs(1.0)..secs(3.0), secs(4.0)..secs(6.0)];
    let total = secs(8.0);
    let voice = |r: &std::ops::Range<u64>| -> Vec<f32> {
        (r.start..r.end)
            .map(|k| ((k % 97) as f32 / 97.0 - 0.5) * 0.2)
            .collect()
    };
    // The export's tracks, every cue and sentence known in advance.
    let (mut sounds, mut beds) = (Vec::<SoundEvent>::new(), Vec::<BedEvent>::new());
    for m in &marks {
        match event(m, &files, &episode).expect("event") {
            Event::Sound(e) => sounds.push(e),
            Event::Bed(e) => beds.push(e),
        }
    }
    let n = usize::try_from(total).expect("fits");
    let mut music = vec![0.0; n];
    let mut sfx = vec![0.0; n];
    Beds::new(beds, Ducker::new(&speech, SAMPLE_RATE), total, &open_file)
        .fill(0, &mut music)
        .expect("music");
    Sounds::new(sounds, &open_file)
        .fill(0, &mut sfx)
        .expect("sfx");
    let mut expected: Vec<f32> = music.iter().zip(&sfx).map(|(m, s)| m + s).collect();
    for r in &speech {
        for (k, v) in (r.start..r.end).zip(voice(r)) {
            expected[usize::try_from(k).expect("fits")] += v;
        }
    }
    // The live mix, fed in the walk's order with mixing in between.
    let (mut heard, mut lane) = (Vec::new(), Vec::new());
    let mut live = LiveMix::new(&episode, &files, &open_file);
    let gap = |a: u64, b: u64| usize::try_from(b - a).expect("fits");
    live.cues(&marks[..1]).expect("bed");
    live.silence(gap(0, speech[0].start));
    live.mix(&mut heard, &mut lane).expect("mixes");
    assert_eq!(
        heard.len() as u64,
        speech[0].start - live.lead,
        "held back by the side-chain's look-ahead"
    );
    live.speech(&voice(&speech[0]));
    live.mix(&mut heard, &mut lane).expect("mixes");
    live.silence(gap(speech[0].end, marks[1].at));
    live.cues(&marks[1..2]).expect("sound");
    live.silence(gap(marks[1].at, speech[1].start));
    live.mix(&mut heard, &mut lane).expect("mixes");
    live.speech(&voice(&speech[1]));
    live.silence(gap(speech[1].end, marks[2].at));
    live.mix(&mut heard, &mut lane).expect("mixes");
    live.cues(&marks[2..]).expect("off");
    live.silence(gap(marks[2].at, total));
    live.finish(&mut heard, &mut lane).expect("finishes");
    assert_eq!(heard.len(), n, "the bed was off before the end");
    assert_eq!(lane.len(), n);
    for (k, (h, e)) in heard.iter().zip(&expected).enumerate() {
        assert!((h - e).abs() < 1e-6, "sample {k}: heard {h}, export {e}");
    }
    for (k, (l, (m, s))) in lane.iter().zip(music.iter().zip(&sfx)).enumerate() {
        assert!((l - (m + s)).abs() < 1e-6, "lane sample {k}");
    }
    // Something plays: the bed before the voice, the sting at 3.2 s.
    let rms = |x: &[f32]| (x.iter().map(|s| s * s).sum::<f32>() / x.len() as f32).sqrt();
    assert!(rms(&lane[..secs(0.9) as usize]) > 0.01);
    assert!(rms(&lane[secs(3.3) as usize..secs(3.7) as usize]) > 0.1);
}

#[test]
fn a_bed_playing_at_the_end_fades_out_and_a_bed_before_the_start_line_is_carried() {
    let dir = tempfile::tempdir().expect("dir");
    tone(dir.path(), "bed.wav", 1.0, 220.0);
    let text = "[bed: bed.wav fade=1s]\nAnn: Hello.\nBen: Hi.\n";
    let episode = Episode::parse("ep.txt", text, &ParseOptions::default()).expect("parses");
    let mut plans = plan_episode(&episode).expect("plans");
    let files = resolve(&mut plans, &episode, dir.path(), &mut Vec::new()).expect("resolves");
    let (mut heard, mut lane) = (Vec::new(), Vec::new());
    let mut live = LiveMix::new(&episode, &files, &open_file);
    // Playing from Ben's line: the walk never meets the cue, the bed is on all the same.
    let carried = live.carry_bed(&plans, 2).expect("carried").expect("a bed");
    assert_eq!(
        (carried.at, carried.line),
        (0, 0),
        "the first cue, at the start"
    );
    live.silence(secs(3.0) as usize);
    live.finish(&mut heard, &mut lane).expect("finishes");
    assert_eq!(
        heard.len() as u64,
        secs(3.0),
        "the fade fits before the end"
    );
    let rms = |x: &[f32]| (x.iter().map(|s| s * s).sum::<f32>() / x.len() as f32).sqrt();
    assert!(rms(&lane[secs(1.5) as usize..secs(1.9) as usize]) > 0.01);
    assert!(
        rms(&lane[secs(2.95) as usize..]) < 0.003,
        "faded out by the end"
    );
    // Once mixed up to the end, the fade starts where the mix is and runs past the end.
    let (mut heard, mut lane) = (Vec::new(), Vec::new());
    let mut live = LiveMix::new(&episode, &files, &open_file);
    live.carry_bed(&plans, 2).expect("carried");
    live.silence(secs(3.0) as usize);
    live.mix(&mut heard, &mut lane).expect("mixes");
    live.finish(&mut heard, &mut lane).expect("finishes");
    let end = secs(3.0) - live.lead + secs(1.0);
    assert_eq!(
        heard.len() as u64,
        end,
        "a whole fade after the last sample mixed"
    );
    assert!(rms(&lane[lane.len() - 100..]) < 0.003);
    // Nothing to carry from the first line on.
    let mut live = LiveMix::new(&episode, &files, &open_file);
    assert_eq!(live.carry_bed(&plans, 0).expect("nothing"), None);
    assert_eq!(live.beds.end(), 0);
}

#[test]
fn without_cues_speech_passes_straight_through() {
    let episode = Episode::parse("ep.txt", "Ann: Hi.\n", &ParseOptions::default()).expect("parses");
    let files = SoundFiles::default();
    let (mut heard, mut lane) = (Vec::new(), Vec::new());
    let mut live = LiveMix::new(&episode, &files, &open_file);
    live.silence(10);
    live.speech(&[0.5; 100]);
    live.mix(&mut heard, &mut lane).expect("mixes");
    assert_eq!(heard.len(), 110, "nothing held back");
    assert_eq!(&heard[10..], &[0.5; 100][..]);
    assert!(lane.is_empty(), "no lane without cues");
    live.finish(&mut heard, &mut lane).expect("finishes");
    assert_eq!(heard.len(), 110);
}
