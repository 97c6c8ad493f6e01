//! Banter on a real Triton Inference Server: `banter triton repo`, then `tritonserver` 2.51
//! (tools/triton/setup.sh installs it from the `nvidia-pytriton` wheel; it runs on the CPU)
//! loading `libtriton_banter.so`, then `banter render --engine triton://…` against it.
//!
//! Skipped outside CI when tritonserver is not installed; in CI a missing server is a failure.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{banter, banter_command, banter_path, model_store};
use triton_client::{Endpoint, TritonServer};
use triton_wire::protocol::{self, Request, Voice, Words};

const EPISODE: &str = "../assets/examples/episode.md";

/// tools/triton/tritonserver.sh, when tools/triton/setup.sh has installed the server.
fn tritonserver() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/triton/tritonserver.sh");
    let usage = Command::new(&script).arg("--help").output().ok()?;
    let said = [usage.stdout, usage.stderr].concat();
    if String::from_utf8_lossy(&said).contains("Usage: tritonserver") {
        return Some(script);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tritonserver is not installed: run tools/triton/setup.sh (scripts/test.sh does)"
    );
    eprintln!("skipped: tritonserver not installed (tools/triton/setup.sh)");
    None
}

/// A repository written by `banter triton repo` (the store: the fetched one unless given).
fn repository(dir: &Path, store: Option<&Path>) -> PathBuf {
    let lib = banter_path().with_file_name("libtriton_banter.so");
    assert!(
        lib.is_file(),
        "{} is missing: run `cargo build --profile test -p triton-backend` (scripts/test.sh does)",
        lib.display()
    );
    let repo = dir.join("repo");
    let mut args = vec!["triton", "repo", repo.to_str().expect("utf-8 path")];
    if let Some(store) = store {
        args.extend(["--models", store.to_str().expect("utf-8 path")]);
    }
    let out = banter(&args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    repo
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One tritonserver on free ports, killed when dropped.
struct Triton {
    child: Child,
    grpc: u16,
    http: u16,
    metrics: u16,
    log: PathBuf,
}

impl Triton {
    fn start(script: &Path, repo: &Path, log: PathBuf, extra: &[&str]) -> Self {
        let (grpc, http, metrics) = (free_port(), free_port(), free_port());
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(script)
            .args(["--model-repository", &format!("{}/models", repo.display())])
            .args([
                "--backend-directory",
                &format!("{}/backends", repo.display()),
            ])
            .args(["--grpc-port", &grpc.to_string()])
            .args(["--http-port", &http.to_string()])
            .args(["--metrics-port", &metrics.to_string()])
            .arg("--allow-gpu-metrics=false")
            .args(extra)
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .stdin(Stdio::null())
            .spawn()
            .expect("start tritonserver");
        Self {
            child,
            grpc,
            http,
            metrics,
            log,
        }
    }

    fn endpoint(&self) -> String {
        format!("triton://127.0.0.1:{}", self.grpc)
    }

    /// The HTTP status of `path` on the server's HTTP port (0 when it does not answer).
    fn status(&self, path: &str) -> u16 {
        let body = get(self.http, path);
        body.split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    /// Waits until `path` answers 200; false after `limit`.
    fn wait_for(&self, path: &str, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.status(path) == 200 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    fn wait_ready(&self) {
        assert!(
            self.wait_for("/v2/health/ready", Duration::from_mins(2)),
            "tritonserver not ready; its log:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// A counter of model `banter` on the metrics page (0 when absent).
    /// [`Self::counter`] once it reaches `at_least`, or its last reading after 20 s. The
    /// backend reports a request's statistics after its last response goes out, so a client
    /// that has its answer may read the counter a moment before it counts.
    fn counter_reaching(&self, name: &str, at_least: f64) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let v = self.counter(name);
            if v >= at_least || Instant::now() > deadline {
                return v;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn counter(&self, name: &str) -> f64 {
        get(self.metrics, "/metrics")
            .lines()
            .find(|l| l.starts_with(name) && l.contains("model=\"banter\""))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }
}

impl Drop for Triton {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.0 GET on the loopback, the whole answer as text ("" when refused).
fn get(port: u16, path: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    out
}

/// `banter render EPISODE` into `dir/NAME.wav` (word captions beside it), with `engine` if any.
fn render(dir: &Path, name: &str, engine: Option<&str>) -> Command {
    let mut cmd = banter_command();
    let out = dir.join(format!("{name}.wav"));
    cmd.args(["render", EPISODE, "--no-cache", "--captions", "words", "-o"])
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(engine) = engine {
        cmd.args(["--engine", engine]);
    }
    cmd
}

fn run(mut cmd: Command) -> (f64, String) {
    let started = Instant::now();
    let out = cmd.output().expect("run banter");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (started.elapsed().as_secs_f64(), stderr)
}

fn same_files(dir: &Path, a: &str, b: &str) {
    for ext in ["wav", "vtt"] {
        let read = |n: &str| std::fs::read(dir.join(format!("{n}.{ext}"))).expect("rendered");
        assert!(read(a) == read(b), "{b}.{ext} differs from {a}.{ext}");
    }
}

/// The remote render is the local render, byte for byte (audio and word-timed captions), on
/// two servers sharing it; then again with one of them killed mid-render.
#[test]
fn a_remote_render_is_the_local_render_even_when_a_server_dies() {
    let (Some(_), Some(script)) = (model_store(), tritonserver()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = repository(dir.path(), None);
    let a = Triton::start(&script, &repo, dir.path().join("a.log"), &[]);
    let b = Triton::start(&script, &repo, dir.path().join("b.log"), &[]);
    a.wait_ready();
    b.wait_ready();
    let both = format!("{},{}", a.endpoint(), b.endpoint());

    let (local_s, _) = run(render(dir.path(), "local", None));
    let (remote_s, said) = run(render(dir.path(), "remote", Some(&both)));
    eprintln!("episode: local {local_s:.2} s, on two CPU Tritons {remote_s:.2} s");
    same_files(dir.path(), "local", "remote");
    // Both servers spoke (the client's count, printed by render), and Triton's metrics count it.
    let spoken = said
        .lines()
        .find_map(|l| l.strip_prefix("segments spoken remotely: "))
        .unwrap_or_default();
    let mut b_spoke = 0;
    for server in [&a, &b] {
        let n = spoken
            .split(", ")
            .find_map(|e| e.strip_prefix(&format!("{} ", server.endpoint())))
            .and_then(|n| n.parse::<usize>().ok());
        assert!(
            n.is_some_and(|n| n > 0),
            "{} spoke: {said}",
            server.endpoint()
        );
        b_spoke = n.unwrap_or_default();
    }
    let started = Instant::now();
    while a.counter("nv_inference_request_success") + b.counter("nv_inference_request_success")
        < 1.0
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "metrics count the requests"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // Kill b once it has spoken again: its segments in flight go to a. Triton publishes its
    // metrics every couple of seconds, so the count is first let catch up with what b said in
    // the render above (a late update read as "spoken again" killed b before it had any work,
    // and the render then only said it was not ready).
    let mut b = b;
    let before = b.counter_reaching("nv_inference_request_success", b_spoke as f64);
    let child = render(dir.path(), "survived", Some(&both))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("render");
    let started = Instant::now();
    while b.counter("nv_inference_request_success") <= before {
        assert!(started.elapsed() < Duration::from_mins(1), "b never spoke");
        std::thread::sleep(Duration::from_millis(20));
    }
    b.child.kill().expect("kill b");
    let out = child.wait_with_output().expect("render");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&b.endpoint()) && stderr.contains("failed"),
        "the user is told which server failed: {stderr}"
    );
    same_files(dir.path(), "local", "survived");
}

/// A malformed request gets an error naming its field while another stream goes on; a
/// request for a voice the server resolves speaks.
#[test]
fn a_malformed_request_is_refused_and_others_go_on() {
    let (Some(_), Some(script)) = (model_store(), tritonserver()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = repository(dir.path(), None);
    let t = Triton::start(&script, &repo, dir.path().join("t.log"), &[]);
    t.wait_ready();
    let endpoint = Endpoint::parse(&t.endpoint()).expect("endpoint");
    let good = Request {
        words: Words::Phonemes(vec!["ðə ʃˈoʊ ɡˈoʊz ˈɑn.".into()]),
        voice: Voice::Named("af_heart".into()),
        speed: 1.0,
        sample_rate: protocol::NATIVE_RATE,
        whole: false,
    };
    let speaking = std::thread::Builder::new()
        .name("good-stream".into())
        .spawn({
            let endpoint = endpoint.clone();
            let good = good.clone();
            move || {
                TritonServer::connect(&endpoint)
                    .expect("client")
                    .stream_raw(good.to_tensors())
                    .expect("answered")
            }
        })
        .expect("thread");
    let client = TritonServer::connect(&endpoint).expect("client");
    let mut no_voice = good.to_tensors();
    no_voice.retain(|t| t.name != protocol::input::VOICE);
    let refused = client.stream_raw(no_voice).expect("answered");
    let error = refused
        .iter()
        .find_map(|r| r.as_ref().err())
        .expect("an error response");
    assert!(error.contains("VOICE"), "{error}");
    let spoken = speaking.join().expect("good stream");
    let samples: usize = spoken
        .iter()
        .map(|r| r.as_ref().expect("chunk").audio.len())
        .sum();
    assert!(samples > 12_000, "{samples} samples");
    assert!(t.counter_reaching("nv_inference_request_failure", 1.0) >= 1.0);
    assert!(t.counter_reaching("nv_inference_request_success", 1.0) >= 1.0);
}

/// Ready means loaded: with a store that holds no model, the server is live but never ready,
/// and its log names the store.
#[test]
fn triton_is_ready_only_when_the_model_is_loaded() {
    let Some(script) = tritonserver() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("no-models-here");
    std::fs::create_dir_all(&empty).expect("dir");
    let repo = repository(dir.path(), Some(&empty));
    // Kept running with the model failed, to be asked.
    let t = Triton::start(
        &script,
        &repo,
        dir.path().join("t.log"),
        &["--exit-on-error=false"],
    );
    assert!(
        t.wait_for("/v2/health/live", Duration::from_mins(1)),
        "live"
    );
    // Past the model's load attempt: it has been reported in the log.
    std::thread::sleep(Duration::from_secs(2));
    assert_ne!(t.status("/v2/health/ready"), 200);
    assert_ne!(t.status("/v2/models/banter/ready"), 200);
    let log = std::fs::read_to_string(&t.log).unwrap_or_default();
    assert!(
        log.contains("no-models-here"),
        "the log names the store:\n{log}"
    );
}
