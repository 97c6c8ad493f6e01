//! Just enough HTTP/1.1 for the API tests, over a plain `TcpStream`: the tests need to send what
//! a well-behaved client never would (a foreign `Host`, a body length without the body), time
//! the arrival of each chunk, and hang up mid-stream. Also the fixture that runs `banter serve`.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::support::model_store;

const IO_TIMEOUT: Duration = Duration::from_mins(5);

/// A running `banter serve --port 0` with its own config folder (so its own token).
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    pub token: String,
    pub config: tempfile::TempDir,
    stderr: PathBuf,
}

impl Server {
    /// Starts the server; `None` (test skipped) when the model is not fetched outside CI.
    pub fn start(extra: &[&str]) -> Option<Self> {
        Self::start_with_env(extra, &[])
    }

    /// [`Self::start`] with extra environment variables.
    pub fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> Option<Self> {
        model_store()?;
        let config = tempfile::tempdir().expect("config dir");
        let stderr = config.path().join("stderr.log");
        let mut child = crate::support::banter_command()
            .args(["serve", "--port", "0"])
            .args(extra)
            .env("BANTER_CONFIG_DIR", config.path())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr log"))
            .spawn()
            .expect("spawn banter serve");
        let stdout = child.stdout.take().expect("stdout pipe");
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("serve-stdout".into())
            .spawn(move || {
                let mut lines = BufReader::new(stdout).lines();
                let _ = tx.send(lines.next());
                for _ in lines {} // keep draining so the server never blocks on stdout
            })
            .expect("spawn stdout reader");
        let first = rx.recv_timeout(Duration::from_mins(5));
        let url = match first {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = child.kill();
                let log = std::fs::read_to_string(&stderr).unwrap_or_default();
                panic!("banter serve printed no URL ({other:?}); stderr:\n{log}");
            }
        };
        let addr: SocketAddr = url
            .strip_prefix("http://")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("first line is not http://ADDR: {url:?}"));
        let token = std::fs::read_to_string(config.path().join("api-token"))
            .expect("token file")
            .trim()
            .to_owned();
        Some(Self {
            child,
            addr,
            token,
            config,
            stderr,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// A request with the token and a loopback Host.
    pub fn get(&self, path: &str) -> Response {
        let auth = self.auth();
        request(self.addr, "GET", path, &[("authorization", &auth)], b"")
    }

    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> Response {
        let auth = self.auth();
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
        ];
        request(
            self.addr,
            "POST",
            path,
            &headers,
            body.to_string().as_bytes(),
        )
    }

    /// Starts a speech request and returns once the status line and headers are in.
    pub fn open_speech(&self, body: &serde_json::Value) -> Streaming {
        let auth = self.auth();
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
        ];
        Streaming::open(
            self.addr,
            "POST",
            "/v1/audio/speech",
            &headers,
            body.to_string().as_bytes(),
        )
    }

    /// An integer counter or gauge from `/metrics` (0 when absent).
    pub fn metric(&self, name: &str) -> u64 {
        let text = String::from_utf8(self.get("/metrics").body).expect("utf-8 metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A whole response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {}: body is not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// Sends one request (adding `Host` unless given, `Content-Length`, `Connection: close`) and
/// reads the whole response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut s = Streaming::open(addr, method, path, headers, body);
    let (body, complete) = s.read_to_end();
    assert!(complete, "{method} {path}: response ended early");
    Response {
        status: s.status,
        headers: s.headers,
        body,
    }
}

/// A response being read chunk by chunk.
pub struct Streaming {
    reader: BufReader<TcpStream>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    chunked: bool,
    remaining: Option<usize>,
    done: bool,
}

impl Streaming {
    pub fn open(
        addr: SocketAddr,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Self {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            let _ = write!(head, "host: {addr}\r\n");
        }
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        {
            let _ = write!(head, "content-length: {}\r\n", body.len());
        }
        for (k, v) in headers {
            let _ = write!(head, "{k}: {v}\r\n");
        }
        head.push_str("connection: close\r\n\r\n");
        let mut w = &stream;
        w.write_all(head.as_bytes()).expect("send head");
        w.write_all(body).expect("send body");
        Self::read_head(BufReader::new(stream))
    }

    fn read_head(mut reader: BufReader<TcpStream>) -> Self {
        let mut line = String::new();
        reader.read_line(&mut line).expect("status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line).expect("header line");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').expect("header has a colon");
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        let find = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let chunked = find("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let remaining = find("content-length").and_then(|v| v.parse().ok());
        Self {
            reader,
            status,
            headers,
            chunked,
            remaining,
            done: false,
        }
    }

    /// The next piece of body as it arrives; `Ok(None)` at a proper end; `Err` when the
    /// connection ends before it.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        if self.done {
            return Ok(None);
        }
        if !self.chunked {
            let mut buf = vec![0; self.remaining.unwrap_or(64 * 1024).min(64 * 1024)];
            let n = self.reader.read(&mut buf)?;
            if let Some(left) = &mut self.remaining {
                *left -= n;
                if *left == 0 {
                    self.done = true;
                } else if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
            } else if n == 0 {
                self.done = true;
                return Ok(None);
            }
            buf.truncate(n);
            return Ok(Some(buf));
        }
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let size_text = line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            loop {
                line.clear();
                if self.reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    break;
                }
            }
            self.done = true;
            return Ok(None);
        }
        let mut data = vec![0; size];
        self.reader.read_exact(&mut data)?;
        let mut crlf = [0; 2];
        self.reader.read_exact(&mut crlf)?;
        Ok(Some(data))
    }

    /// Everything left, and whether the body ended properly.
    pub fn read_to_end(&mut self) -> (Vec<u8>, bool) {
        let mut all = Vec::new();
        loop {
            match self.next_chunk() {
                Ok(Some(data)) => all.extend_from_slice(&data),
                Ok(None) => return (all, true),
                Err(_) => return (all, false),
            }
        }
    }
}

/// Parses a streamed 16-bit mono WAV: (sample rate, samples). Sizes may be 0xFFFFFFFF.
pub fn parse_wav(bytes: &[u8]) -> (u32, Vec<i16>) {
    assert!(bytes.len() >= 44, "WAV shorter than its header");
    assert_eq!(&bytes[0..4], b"RIFF");
    assert_eq!(&bytes[8..12], b"WAVE");
    assert_eq!(&bytes[12..16], b"fmt ");
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
    assert_eq!(u16_at(20), 1, "PCM");
    assert_eq!(u16_at(22), 1, "mono");
    assert_eq!(u16_at(34), 16, "16-bit");
    let rate = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
    assert_eq!(&bytes[36..40], b"data");
    (rate, pcm_samples(&bytes[44..]))
}

pub fn pcm_samples(bytes: &[u8]) -> Vec<i16> {
    assert_eq!(bytes.len() % 2, 0, "odd number of PCM bytes");
    bytes
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

pub fn rms(samples: &[i16]) -> f64 {
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len().max(1) as f64).sqrt() / 32768.0
}

/// Standard base64 with padding, for SSE deltas.
pub fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let digits: Vec<u32> = quad
            .iter()
            .filter(|&&c| c != b'=')
            .map(|&c| value(c))
            .collect();
        let n = digits.iter().fold(0, |acc, d| (acc << 6) | d) << (6 * (4 - digits.len()));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..digits.len().saturating_sub(1)]);
    }
    out
}
