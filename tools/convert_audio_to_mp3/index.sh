#!/usr/bin/env bash
# convert_audio_to_mp3: an ffmpeg wrapper.
#
# toolbind's bash contract: params arrive as one JSON object on stdin (never argv);
# stdout is the result text; a non-zero exit is an error result carrying the tail of
# stderr; progress lines go to fd 3 when the runtime opened it.
set -euo pipefail

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

if { true >&3; } 2>/dev/null; then
  progress() { printf '%s\n' "$*" >&3 || true; }
else
  progress() { :; }
fi
# An update with a position: {"text", "progress", "total"} (see tools/README.md). The text
# is ours and holds no quote or backslash.
progress_at() { progress "{\"text\": \"$3\", \"progress\": $1, \"total\": $2}"; }

command -v python3 >/dev/null 2>&1 || die "python3 not found on PATH; it is needed to read the JSON parameters"
[[ -t 0 ]] && die "expected the parameters as a JSON object on stdin"
params_json=$(cat)

# Validate and unpack with python3 (always present; jq may not be). Fields come back
# NUL-separated so any path survives intact.
read_params='
import json, sys
try:
    p = json.loads(sys.stdin.read() or "{}")
except ValueError as e:
    sys.exit(f"error: parameters are not valid JSON: {e}")
if not isinstance(p, dict):
    sys.exit("error: parameters must be a JSON object")
def text(name, required=False):
    v = p.get(name)
    if v is None or v == "":
        if required:
            sys.exit(f"error: {name} is required")
        return ""
    if not isinstance(v, str):
        sys.exit(f"error: {name} must be a string")
    if "\0" in v:
        sys.exit(f"error: {name} must not contain NUL bytes")
    return v
bitrate = p.get("bitrate") or "192k"
if bitrate not in ("64k", "128k", "192k", "256k", "320k"):
    sys.exit(f"error: bitrate must be one of 64k, 128k, 192k, 256k, 320k; got {bitrate!r}")
overwrite = p.get("overwrite", False)
if isinstance(overwrite, str) and overwrite.lower() in ("true", "false"):
    overwrite = overwrite.lower() == "true"
if not isinstance(overwrite, bool):
    sys.exit("error: overwrite must be true or false")
fields = [text("input_path", True), text("output_path"), bitrate, "true" if overwrite else "false"]
sys.stdout.write("".join(f + "\0" for f in fields))
'
mapfile -d '' -t fields < <(python3 -c "$read_params" <<<"$params_json")
[[ ${#fields[@]} -eq 4 ]] || exit 2
input_path=${fields[0]}
output_path=${fields[1]}
bitrate=${fields[2]}
overwrite=${fields[3]}

command -v ffmpeg >/dev/null 2>&1 || die "ffmpeg not found on PATH; install it (apt-get install ffmpeg)"

[[ -e $input_path ]] || die "input file not found: $input_path"
[[ -f $input_path ]] || die "input is not a regular file: $input_path"
[[ -r $input_path ]] || die "input file is not readable: $input_path"

if [[ -z $output_path ]]; then
  base=${input_path%.*}
  # A dot in a folder name is not an extension: "dir.v2/track" -> "dir.v2/track.mp3".
  if [[ $base == "$input_path" || -z ${base##*/} || ${input_path##*/} != *.* ]]; then
    base=$input_path
  fi
  output_path="$base.mp3"
fi
[[ $output_path == *.mp3 || $output_path == *.MP3 ]] || output_path="$output_path.mp3"

out_dir=$(dirname -- "$output_path")
[[ -d $out_dir ]] || die "output folder does not exist: $out_dir"
[[ -w $out_dir ]] || die "output folder is not writable: $out_dir"
if [[ -e $output_path ]]; then
  if [[ $(realpath -- "$output_path") == "$(realpath -- "$input_path")" ]]; then
    die "output would overwrite the input ($output_path); pass a different output_path"
  fi
  [[ $overwrite == true ]] || die "output file already exists: $output_path (set overwrite to true to replace it)"
fi

# Captured, not piped into `grep -q`: under pipefail grep's early exit would SIGPIPE ffmpeg.
encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null || true)
if [[ $encoders != *libmp3lame* ]]; then
  die "this ffmpeg build has no MP3 encoder (libmp3lame); install a full ffmpeg (apt-get install ffmpeg)"
fi

# Total duration in microseconds, for percentages; empty when ffprobe cannot tell.
duration_us=""
if command -v ffprobe >/dev/null 2>&1; then
  duration=$(ffprobe -v error -show_entries format=duration -of default=noprint_wrappers=1:nokey=1 \
    "file:$input_path" 2>/dev/null | head -n 1 || true)
  if [[ $duration =~ ^[0-9]+(\.[0-9]+)?$ && $duration != 0 && $duration != 0.0* ]]; then
    duration_us=$(python3 -c 'import sys; print(int(float(sys.argv[1]) * 1e6))' "$duration")
  fi
fi

# Write next to the target, then rename: a failed or cancelled run leaves no partial file.
tmp_output=$(mktemp -- "$out_dir/.convert_audio_to_mp3.XXXXXX")
stderr_log=$(mktemp)
cleanup() { rm -f -- "$tmp_output" "$stderr_log"; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# MP3 at sample rates below 32 kHz (MPEG-2/2.5) tops out at 160 kbit/s and lame quietly
# lowers anything above it: resample such input so the bitrate asked for is the one made.
resample=()
case $bitrate in
192k | 256k | 320k)
  if command -v ffprobe >/dev/null 2>&1; then
    rate=$(ffprobe -v error -select_streams a:0 -show_entries stream=sample_rate \
      -of default=noprint_wrappers=1:nokey=1 "file:$input_path" 2>/dev/null | head -n 1 || true)
    if [[ $rate =~ ^[0-9]+$ ]] && ((rate < 32000)); then
      resample=(-ar 44100)
    fi
  fi
  ;;
esac

start="Converting $input_path to MP3 at $bitrate..."
if [[ -n $duration_us && $start != *[\\\"]* ]]; then
  progress_at 0 100 "$start"
else
  progress "$start"
fi
last_pct=-1
# "file:" keeps ffmpeg from reading a path as a protocol URL or an option.
if ! ffmpeg -hide_banner -nostdin -nostats -loglevel error -y \
  -i "file:$input_path" -vn -map_metadata 0 -codec:a libmp3lame -b:a "$bitrate" "${resample[@]}" -f mp3 \
  -progress pipe:1 "file:$tmp_output" 2>"$stderr_log" |
  while IFS='=' read -r key value; do
    # Only plain if-statements in here: under pipefail a false `test && x` as the last
    # command would turn a successful conversion into a failure.
    if [[ $key == out_time_us && -n $duration_us && $value =~ ^[0-9]+$ ]]; then
      pct=$((value * 100 / duration_us))
      if ((pct > 100)); then pct=100; fi
      # Every 5% at most, so long files do not flood the agent with updates.
      if ((pct >= last_pct + 5 || (pct == 100 && last_pct < 100))); then
        progress_at "$pct" 100 "Converting: ${pct}%"
        last_pct=$pct
      fi
    elif [[ $key == progress && $value == end ]]; then
      if ((last_pct < 100)); then progress_at 100 100 "Converting: 100%"; fi
      last_pct=100
    fi
    :
  done; then
  tail -n 20 -- "$stderr_log" >&2
  die "ffmpeg could not convert $input_path"
fi

mv -f -- "$tmp_output" "$output_path"
# mktemp made it 0600; give it the mode a normally created file would have.
chmod "$(printf '%o' $((0666 & ~$(umask))))" -- "$output_path" 2>/dev/null || true

size=$(stat -c %s -- "$output_path")
seconds=""
if [[ -n $duration_us ]]; then
  seconds=$(python3 -c 'import sys; print(f"{int(sys.argv[1]) / 1e6:.1f}")' "$duration_us")
fi
progress "Done"
text=$(printf 'Converted %s -> %s\nBitrate: %s, size: %s bytes' "$input_path" "$output_path" "$bitrate" "$size")
[[ -n $seconds ]] && text+=", duration: $seconds s"
# `output: json` (TOOL.md): the result is the summary text and a link to the MP3, which a
# client can open or fetch (MCP `resource_link`).
python3 -c '
import json, os, sys, urllib.parse
text, path, size = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3])
link = {"type": "resource_link", "uri": "file://" + urllib.parse.quote(path),
        "name": os.path.basename(path), "mimeType": "audio/mpeg", "size": size}
print(json.dumps({"content": [{"type": "text", "text": text}, link]}))
' "$text" "$output_path" "$size"
