//! What the scripted turn needs from the outside world, made here: a sample email
//! database, a WAV file, and a loopback web server (this sandbox has no internet).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Creates the sample email database with the tool's own script (once).
pub fn sample_email_db(script: &Path, db: &Path) -> std::io::Result<()> {
    if db.exists() {
        return Ok(());
    }
    let out = Command::new("python3").arg(script).arg(db).output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(())
}

/// A mono 16-bit PCM sine wave.
pub fn write_wav(path: &Path, freq: f64, secs: f64) -> std::io::Result<()> {
    let rate = 16_000u32;
    let n = (f64::from(rate) * secs) as u32;
    let mut b = Vec::with_capacity(44 + n as usize * 2);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n * 2).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&(rate * 2).to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&16u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(n * 2).to_le_bytes());
    for i in 0..n {
        let t = f64::from(i) / f64::from(rate);
        let v = ((t * freq * std::f64::consts::TAU).sin() * 12_000.0) as i16;
        b.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, b)
}

const PAGE: &str = "<!doctype html><html><head><title>Release notes</title><style>p{color:red}</style></head>\
<body><h1>toolbind 0.1 release notes</h1><p>TOOL.md folders become <b>typed Rust</b>, \
JSON Schemas and prompts.</p><ul><li>Runs tools in node, python3 and bash</li>\
<li>See the <a href=\"/docs\">docs</a></li></ul><script>alert('dropped')</script></body></html>";

/// Serves `/release-notes` (an HTML page) and `/slow` (a page that trickles out over 30 s)
/// on a loopback port; returns the base URL.
pub fn serve_http() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]);
                if req.starts_with("GET /slow") {
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><body>");
                    for _ in 0..300 {
                        if stream.write_all(b"<p>still loading</p>").is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                } else {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        PAGE.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(PAGE.as_bytes());
                }
            });
        }
    });
    Ok(base)
}
