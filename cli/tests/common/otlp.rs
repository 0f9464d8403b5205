//! An OTLP/HTTP receiver on loopback (fixtures/otlp_receiver.py, on the python of
//! tests/clients): what `toolbind` exported, decoded.

use serde_json::Value;

use super::{Background, clients_dir, eventually, fixture};

/// A receiver that answers every export (`"answer"`) or never does (`"hang"`).
pub struct Receiver {
    dir: tempfile::TempDir,
    pub port: u16,
    _process: Background,
}

impl Receiver {
    pub fn start(mode: &str) -> Receiver {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = std::process::Command::new(clients_dir().join("py/bin/python"));
        cmd.arg(fixture("otlp_receiver.py"))
            .arg(dir.path())
            .arg(mode);
        // Ready once its port file is written (below), not by a line in its log.
        let process = Background::start(cmd, dir.path().join("receiver.log"), "");
        let port_file = dir.path().join("port");
        assert!(
            eventually(30.0, || port_file.exists()),
            "the OTLP receiver did not start:\n{}",
            process.log()
        );
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Receiver {
            dir,
            port,
            _process: process,
        }
    }

    pub fn lines(&self, file: &str) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join(file))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn spans(&self) -> Vec<Value> {
        self.lines("spans.jsonl")
    }

    pub fn raw(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("raw.bin")).unwrap_or_default()
    }
}

/// The spans named `name`.
pub fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

/// Attribute `key` of `span`.
pub fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}
