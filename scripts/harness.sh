# Sourced by scripts/load.sh and scripts/instructions.sh (not run on its own).

# Sets WINLINT and LOADSERVER: the release `winlint` and the loadserver bench binary, built
# here unless both variables already name prebuilt binaries (e.g. two builds in one session).
build_servers() {
  if [ -z "${WINLINT:-}" ] || [ -z "${LOADSERVER:-}" ]; then
    cargo build --release --quiet
    cargo bench --bench loadserver --no-run --quiet 2>/dev/null || cargo bench --bench loadserver --no-run
    LOADSERVER=$(ls -t target/release/deps/loadserver-* | grep -v '\.d$' | head -1)
    WINLINT=target/release/winlint
  fi
}

# write_bodies DIR OUT: the captured reviews DIR/NNN.json, one compact JSON per line (oha -Z).
write_bodies() {
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
with open(sys.argv[2], "w") as out:
    for f in sorted(glob.glob(sys.argv[1] + "/[0-9]*.json")):
        if not f.endswith(".meta.json"):
            out.write(json.dumps(json.load(open(f)), separators=(",", ":")) + "\n")
PY
}
