use super::*;

fn request() -> Request {
    Request {
        words: Words::Phonemes(vec!["həlˈoʊ.".into(), "wˈɜːld!".into()]),
        voice: Voice::Style(
            (0..STYLE_ROWS * STYLE_DIM)
                .map(|i| i as f32 * 1e-3)
                .collect(),
        ),
        speed: 1.25,
        sample_rate: 24_000,
        whole: true,
    }
}

fn parse(tensors: &[OwnedTensor]) -> Result<Request, FieldError> {
    Request::from_tensors(tensors.iter().map(OwnedTensor::borrow))
}

#[test]
fn a_request_survives_the_wire() {
    let r = request();
    assert_eq!(parse(&r.to_tensors()).unwrap(), r);
    let named = Request {
        words: Words::Text("Hello there.".into()),
        voice: Voice::Named("af_bella:0.7+af_sky:0.3".into()),
        speed: 0.8,
        sample_rate: 44_100,
        whole: false,
    };
    assert_eq!(parse(&named.to_tensors()).unwrap(), named);
}

#[test]
fn a_chunk_survives_the_wire() {
    let first = Chunk {
        audio: vec![0.5, -0.25, 0.0],
        segment: 3,
        segment_end: false,
        durations: Some(vec![1, 4, 0, 7]),
    };
    let later = Chunk {
        durations: None,
        segment_end: true,
        ..first.clone()
    };
    for c in [first, later] {
        let t = c.to_tensors();
        assert_eq!(
            Chunk::from_tensors(t.iter().map(OwnedTensor::borrow)).unwrap(),
            c
        );
    }
}

/// Defaults: speed 1, 24 kHz, windowed.
#[test]
fn optional_inputs_take_their_defaults() {
    let t = request().to_tensors();
    let r = parse(&t[..2]).unwrap();
    assert_eq!((r.speed, r.sample_rate, r.whole), (1.0, NATIVE_RATE, false));
}

#[test]
fn every_refusal_names_its_field() {
    let good = request().to_tensors();
    let with = |f: &dyn Fn(&mut Vec<OwnedTensor>)| {
        let mut t = good.clone();
        f(&mut t);
        parse(&t).expect_err("refused")
    };
    let cases: Vec<(FieldError, &str, &str)> = vec![
        (
            with(&|t| {
                t.remove(0);
            }),
            "TEXT",
            "missing",
        ),
        (
            with(&|t| {
                t.remove(1);
            }),
            "VOICE",
            "missing",
        ),
        (
            with(&|t| t.push(OwnedTensor::strings(input::TEXT, &["hi"]))),
            "TEXT",
            "not both",
        ),
        (
            with(&|t| t[4].name = "LOUDNESS"),
            "LOUDNESS",
            "not an input",
        ),
        (with(&|t| t.push(t[2].clone())), "SPEED", "twice"),
        (
            with(&|t| t[1].shape = vec![STYLE_DIM as i64, STYLE_ROWS as i64]),
            "STYLE",
            "shape",
        ),
        (
            with(&|t| t[1].data[0..4].copy_from_slice(&f32::NAN.to_le_bytes())),
            "STYLE",
            "not a number",
        ),
        (
            with(&|t| t[2] = OwnedTensor::f32s(input::SPEED, vec![1], &[-1.0])),
            "SPEED",
            "not a speaking rate",
        ),
        (
            with(&|t| t[2].datatype = DataType::Int32),
            "SPEED",
            "expected FP32",
        ),
        (
            with(&|t| {
                t[2].data.pop();
            }),
            "SPEED",
            "bytes",
        ),
        (
            with(&|t| t[3] = OwnedTensor::i32s(input::SAMPLE_RATE, &[96_000])),
            "SAMPLE_RATE",
            "outside",
        ),
        (with(&|t| t[0].data.truncate(6)), "PHONEMES", "remain"),
        (with(&|t| t[0].data.push(0)), "PHONEMES", "after its"),
        (with(&|t| t[0].shape = vec![-1]), "PHONEMES", "not a size"),
        (
            with(&|t| t[0] = OwnedTensor::strings(input::PHONEMES, &[] as &[&str])),
            "PHONEMES",
            "no segments",
        ),
        (
            with(&|t| {
                t[0].data[4] = 0xff;
            }),
            "PHONEMES",
            "UTF-8",
        ),
    ];
    for (e, field, says) in cases {
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(says), "`{e}` should say `{says}`");
        assert!(
            e.to_string().starts_with(&format!("input `{field}`")),
            "{e}"
        );
    }
}

#[test]
fn huge_claims_are_refused_before_allocating() {
    let t = Tensor {
        name: input::PHONEMES,
        datatype: DataType::Bytes,
        shape: &[i64::MAX, i64::MAX],
        data: &[],
    };
    let e = Request::from_tensors([t]).expect_err("refused");
    assert_eq!(e.field, "PHONEMES");
    let big = Tensor {
        shape: &[MAX_SEGMENTS as i64 + 1],
        ..t
    };
    assert!(Request::from_tensors([big])
        .expect_err("refused")
        .reason
        .contains("at most"));
}

#[test]
fn audio_that_is_not_a_number_is_refused() {
    let chunk = Chunk {
        audio: vec![0.0, f32::NAN],
        segment: 0,
        segment_end: true,
        durations: None,
    };
    let t = chunk.to_tensors();
    let e = Chunk::from_tensors(t.iter().map(OwnedTensor::borrow)).expect_err("refused");
    assert_eq!(e.field, "AUDIO");
}
