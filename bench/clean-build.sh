#!/usr/bin/env bash
# The clean build of a minimal agent, to measure what the default features cost: a binary
# that generates the bindings of the shipped tools/ in build.rs, includes them, loads the
# folder and makes one call.
# Built twice from nothing (empty target folder, dependencies already downloaded, debug,
# the default `-j`), once with the runtime's default features (`typescript`: oxc, to run
# TypeScript tools on Node 20; `macros`: the proc-macros, so syn) and once with
# `default-features = false` (the build.rs path only). Prints a Markdown table.
#
#   bench/clean-build.sh            # from the repository root
set -euo pipefail
root=$(pwd)
work="$root/target/clean-build"
rm -rf "$work"
mkdir -p "$work"

make_agent() { # NAME FEATURES
  local dir="$work/$1"
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "minimal-agent"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolbind = { path = "$root/runtime"$2 }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }
serde_json = "1"

[build-dependencies]
toolbind-codegen = { path = "$root/codegen" }

[workspace]
TOML
  cat >"$dir/build.rs" <<RS
fn main() -> Result<(), toolbind_codegen::Error> {
    toolbind_codegen::Config::new().tools_dir("$root/tools").compile()
}
RS
  cat >"$dir/src/main.rs" <<RS
toolbind::include_tools!();

#[tokio::main]
async fn main() {
    let loaded = toolbind::Loader::new().dir("$root/tools").load();
    let runtime = toolbind::Runtime::builder().registry(loaded.registry).build();
    let args = serde_json::json!({"action": "list"});
    let call = ToolCall::parse(&runtime, "todo", args).expect("a valid call");
    println!("{}", call.call(&runtime, toolbind::CallOptions::new()).await.text_content());
}
RS
  cp "$root/Cargo.lock" "$dir/Cargo.lock"
}

make_agent default ""
make_agent minimal ", default-features = false"

build() { # NAME: seconds of a clean build
  local dir="$work/$1"
  (cd "$dir" && cargo fetch -q)
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build -q --offline)
  end=$(date +%s.%N)
  printf '%.1f' "$(echo "$end - $start" | bc)"
}

d=$(build default)
m=$(build minimal)
crates() { (cd "$work/$1" && cargo tree -e normal,build --prefix none -q | sort -u | wc -l); }
echo "| minimal agent, clean debug build | crates | time |"
echo "| --- | --- | --- |"
echo "| toolbind with default features (typescript, macros) | $(crates default) | ${d} s |"
echo "| toolbind, default-features = false | $(crates minimal) | ${m} s |"
echo "| saved without default features | | $(printf '%.0f' "$(echo "(1 - $m / $d) * 100" | bc -l)") % |"
