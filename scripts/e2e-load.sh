#!/usr/bin/env bash
# End-to-end load (issue 29 item 9): N concurrent pod creates through a real kube-apiserver 1.32
# (envtest assets) and etcd on this machine, in three modes registered the same way
# (`winlint manifests --url`: one MutatingWebhookConfiguration on CREATE pods, one
# ValidatingWebhookConfiguration on CREATE/UPDATE pods, failurePolicy Fail):
#   none     no webhook: the API server's own cost;
#   noop     the no-op webhook (benches/loadserver.rs `baseline`: same axum + hyper + rustls
#            stack, `allowed: true`, no patch) at both URLs: the transport cost of any webhook;
#   winlint  `winlint serve` (default policy, no cluster facts);
#   replay   the no-op, but `/mutate` answers with the patch winlint gives the same pod
#            (captured at start; loadserver `--patch`): the API server's cost of winlint's
#            patches without winlint's own time. Not in MODES unless named.
# Kyverno's method at this machine's scale: ~5 KB pods (60 env vars), half Windows (an IIS
# image, no selector: winlint pins its OS), half Linux (nginx); `generateName`, so one body
# serves every create. wrk keeps CLIENTS connections busy for SECONDS; the modes alternate
# (rep 1: none, noop, winlint at each client count; rep 2 …) so that drift (other builds on the
# machine) spreads over all modes. Pods are deleted between runs. Prints one line per run
# (creates/s, p50, p99, non-2xx, CPU seconds of kube-apiserver, etcd and the webhook per 1 000
# creates; the API server's connections to the webhook, one when it speaks HTTP/2; its own
# account of admission from its /metrics: calls and ms per create of each in-tree plugin, each
# webhook and each step) and a summary with medians, the spread and winlint/noop ratios from
# the same rep.
#
# Usage: scripts/e2e-load.sh [SECONDS per run, default 20]
#   REPS=3 CLIENTS="8 32" MODES="none noop winlint" WINLINT=… LOADSERVER=… (prebuilt binaries;
#   else built in release like scripts/load.sh) WINLINT_ARGS="…" (extra `serve` flags)
#   PODS=unpinned (default: IIS pods without OS pins, which winlint patches) or pinned (as
#   `winlint --fix` leaves a controller's template: nothing to patch)
#   PERF=DIR: `perf record` the webhook of each run into DIR
#   KUBEBUILDER_ASSETS: kube-apiserver and etcd (`eval "$(scripts/test-tools.sh envtest)"`).
# Needs wrk (Debian `wrk`), openssl, curl. Traffic only to 127.0.0.1; every run is bounded by
# wrk -d; everything started here is stopped on exit. Not run in CI (tens of minutes of load);
# `scripts/e2e-load.sh 2` with REPS=1 CLIENTS=2 is a smoke run of a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-20}
REPS=${REPS:-3}
CLIENTS=${CLIENTS:-"8 32"}
MODES=${MODES:-"none noop winlint"}
PODS=${PODS:-unpinned}   # unpinned: IIS pods without OS pins (winlint patches them); pinned: as --fix leaves them
command -v wrk >/dev/null || { echo "install Debian 'wrk'" >&2; exit 2; }
A=${KUBEBUILDER_ASSETS:?set KUBEBUILDER_ASSETS (eval \"\$(scripts/test-tools.sh envtest)\")}
for b in kube-apiserver etcd; do [ -x "$A/$b" ] || { echo "no $A/$b" >&2; exit 2; }; done

. scripts/harness.sh
build_servers
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- the API server (the flags of tests/k8s_support) ---------------------------------------
TOKEN=e2e-load-admin-token
cd "$TMP"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=e2e-ca -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout api.key -out api.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
openssl x509 -req -in api.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out api.crt 2>/dev/null
openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
echo "$TOKEN,admin,admin-uid,\"system:masters\"" > tokens.csv
cd - >/dev/null
EPORT=$(free_port); PPORT=$(free_port); APORT=$(free_port)
"$A/etcd" --data-dir "$TMP/etcd" --listen-client-urls "http://127.0.0.1:$EPORT" \
  --advertise-client-urls "http://127.0.0.1:$EPORT" --listen-peer-urls "http://127.0.0.1:$PPORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$PPORT" \
  --initial-cluster "default=http://127.0.0.1:$PPORT" >"$TMP/etcd.log" 2>&1 &
PIDS+=($!); ETCD=$!
"$A/kube-apiserver" --etcd-servers="http://127.0.0.1:$EPORT" --secure-port="$APORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --tls-cert-file="$TMP/api.crt" --tls-private-key-file="$TMP/api.key" --client-ca-file="$TMP/ca.crt" \
  --token-auth-file="$TMP/tokens.csv" --service-account-key-file="$TMP/sa.pub" \
  --service-account-signing-key-file="$TMP/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc --authorization-mode=RBAC \
  --service-cluster-ip-range=10.96.0.0/12 \
  --enable-admission-plugins=NamespaceLifecycle,ServiceAccount,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
  --allow-privileged=true >"$TMP/kube-apiserver.log" 2>&1 &
PIDS+=($!); APISERVER=$!
API="https://127.0.0.1:$APORT"
k() { curl -sS --cacert "$TMP/ca.crt" -H "Authorization: Bearer $TOKEN" "$@"; }
for _ in $(seq 240); do [ "$(k -o /dev/null -w '%{http_code}' "$API/readyz" 2>/dev/null)" = 200 ] && break; sleep 0.5; done
[ "$(k -o /dev/null -w '%{http_code}' "$API/readyz")" = 200 ] || { tail "$TMP/kube-apiserver.log" >&2; exit 1; }
NS=load
post() { k -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$API$1" -d "$2"; }
post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}" >/dev/null
post /api/v1/namespaces/$NS/serviceaccounts '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}' >/dev/null

# --- the webhooks: winlint's certificate and registration, the no-op on the same files ----
WPORT=$(free_port); NPORT=$(free_port)
"$WINLINT" manifests --url "https://127.0.0.1:$WPORT" --cert-dir "$TMP/certs" > "$TMP/winlint.yaml"
# shellcheck disable=SC2086 # WINLINT_ARGS is a list of flags
"$WINLINT" serve --listen "127.0.0.1:$WPORT" --tls-cert "$TMP/certs/tls.crt" --tls-key "$TMP/certs/tls.key" \
  --cluster-facts off ${WINLINT_ARGS:-} 2>"$TMP/winlint.log" &
PIDS+=($!); WINLINT_PID=$!
"$LOADSERVER" baseline --listen "127.0.0.1:$NPORT" --tls-cert "$TMP/certs/tls.crt" --tls-key "$TMP/certs/tls.key" 2>"$TMP/noop.log" &
PIDS+=($!); NOOP_PID=$!
sed "s#https://127.0.0.1:$WPORT/#https://127.0.0.1:$NPORT/#" "$TMP/winlint.yaml" > "$TMP/noop.yaml"
grep -q "127.0.0.1:$NPORT/mutate" "$TMP/noop.yaml" || { echo "no webhook URL in the manifests" >&2; exit 1; }
for port in $WPORT $NPORT; do
  for _ in $(seq 100); do curl -sk "https://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
done
KUBECTL=${KUBECTL:-$(command -v "$A/kubectl" kubectl 2>/dev/null | head -1)}
cat > "$TMP/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$API", certificate-authority: "$TMP/ca.crt"}}]
users: [{name: admin, user: {token: "$TOKEN"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
KC
kc() { "$KUBECTL" --kubeconfig "$TMP/kubeconfig" "$@"; }
WEBHOOKS=$(sed -n 's/^  name: //p' "$TMP/winlint.yaml" | sort -u)
register() {
  for w in $WEBHOOKS; do
    kc delete mutatingwebhookconfiguration "$w" --ignore-not-found >/dev/null 2>&1 || true
    kc delete validatingwebhookconfiguration "$w" --ignore-not-found >/dev/null 2>&1 || true
  done
  case "$1" in
    none) ;;
    noop) kc apply -f "$TMP/noop.yaml" >/dev/null ;;
    winlint) kc apply -f "$TMP/winlint.yaml" >/dev/null ;;
    replay) kc apply -f "$TMP/replay.yaml" >/dev/null ;;
  esac
  sleep 2  # the API server's webhook informer
}

# --- the load: wrk, two bodies (Windows, Linux) in turn ------------------------------------
python3 - "$TMP" "$PODS" <<'PY'
import json, sys
d, pinned = sys.argv[1], sys.argv[2] == "pinned"
def pod(windows):
    image = ("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022" if windows
             else "nginx:1.27")
    env = [{"name": f"SETTING_{k}", "value": f"value-{k}-" + "x" * 40} for k in range(60)]
    spec = {"containers": [{"name": "app", "image": image, "env": env,
                            "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}}]}
    if pinned:  # as `winlint --fix` leaves a template: what the webhook would add is there
        if windows:
            spec.update(nodeSelector={"kubernetes.io/os": "windows"}, os={"name": "windows"},
                        tolerations=[{"key": "os", "operator": "Equal", "value": "windows",
                                      "effect": "NoSchedule"}])
        else:
            spec.update(nodeSelector={"kubernetes.io/os": "linux"}, os={"name": "linux"})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": "w-" if windows else "l-", "labels": {"app": "load"}},
            "spec": spec}
for name, w in (("windows", True), ("linux", False)):
    open(f"{d}/{name}.json", "w").write(json.dumps(pod(w), separators=(",", ":")))
PY
cat > "$TMP/load.lua" <<LUA
local function slurp(p) local f = io.open(p, "rb"); local s = f:read("*a"); f:close(); return s end
local bodies = {slurp("$TMP/windows.json"), slurp("$TMP/linux.json")}
local reqs = {}
local idx = 0
init = function(args)
  local h = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer $TOKEN"}
  for i, b in ipairs(bodies) do
    reqs[i] = wrk.format("POST", "/api/v1/namespaces/$NS/pods", h, b)
  end
end
request = function() idx = idx % #reqs + 1; return reqs[idx] end
LUA
echo "pod bodies: windows $(wc -c < "$TMP/windows.json") B, linux $(wc -c < "$TMP/linux.json") B" >&2

# winlint's answer to each body at /mutate, as an AdmissionReview from the API server would
# ask it: its patch (size and shape, for the record) and the replay server's canned patches.
python3 - "$TMP" "$WPORT" "$NS" <<'PY'
import base64, json, ssl, sys, http.client
d, port, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=f"{d}/certs/ca.crt")
patches = {}
for os_, needle in (("windows", "mcr.microsoft.com/windows/"), ("linux", "nginx:")):
    pod = json.load(open(f"{d}/{os_}.json"))
    # As the API server sends it: its in-tree mutating plugins run before the webhooks, and
    # DefaultTolerationSeconds has added its two tolerations (so winlint appends to the list,
    # `/spec/tolerations/-`, and the replay must too: replacing the list would make the second
    # pass re-add them and call the webhook a third time).
    defaults = [{"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300} for k in ("not-ready", "unreachable")]
    pod["spec"]["tolerations"] = pod["spec"].get("tolerations", []) + defaults
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "e2e-load-probe", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "", "namespace": ns, "operation": "CREATE",
        "userInfo": {"username": "admin", "groups": ["system:masters"]},
        "object": dict(pod, metadata=dict(pod["metadata"], namespace=ns)),
        "oldObject": None, "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
    c.request("POST", "/mutate", json.dumps(review), {"Content-Type": "application/json"})
    resp = json.loads(c.getresponse().read())["response"]
    ops = json.loads(base64.b64decode(resp["patch"])) if resp.get("patch") else []
    patches[needle] = ops
    print(f"winlint's patch of the {os_} pod: {len(json.dumps(ops, separators=(',', ':')))} B, "
          f"{len(ops)} ops: {json.dumps(ops)}; warnings: {len(resp.get('warnings') or [])}",
          file=sys.stderr)
json.dump(patches, open(f"{d}/patches.json", "w"))
PY
# REPLAY_PATCH=FILE replays other ops instead ({"NEEDLE": [ops…]}): which part of a patch costs.
[ -n "${REPLAY_PATCH:-}" ] && cp "$REPLAY_PATCH" "$TMP/patches.json"
RPORT=$(free_port)
"$LOADSERVER" baseline --listen "127.0.0.1:$RPORT" --tls-cert "$TMP/certs/tls.crt" --tls-key "$TMP/certs/tls.key" \
  --patch "$TMP/patches.json" 2>"$TMP/replay.log" &
PIDS+=($!); REPLAY_PID=$!
sed "s#https://127.0.0.1:$WPORT/mutate#https://127.0.0.1:$RPORT/mutate#; s#https://127.0.0.1:$WPORT/validate#https://127.0.0.1:$NPORT/validate#" \
  "$TMP/winlint.yaml" > "$TMP/replay.yaml"
for _ in $(seq 100); do curl -sk "https://127.0.0.1:$RPORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # clock ticks, user + system
# The API server's own account of its admission time (its /metrics, CREATE only): per
# in-tree plugin, per webhook call, per step, and the whole POST. Diffed around each run.
scrape() { k "$API/metrics" > "$1"; }
admission_split() {  # BEFORE AFTER CREATES OUT: calls and ms per create of each admission part
  python3 - "$@" <<'PY'
import json, re, sys
before, after, creates, out = sys.argv[1], sys.argv[2], max(int(sys.argv[3]), 1), sys.argv[4]
fams = {"apiserver_admission_controller_admission_duration_seconds": "plugin",
        "apiserver_admission_webhook_admission_duration_seconds": "webhook",
        "apiserver_admission_step_admission_duration_seconds": "step",
        "apiserver_request_duration_seconds": "request"}
line = re.compile(r'^(\w+)_(sum|count)\{([^}]*)\} (\S+)$')
def read(path):
    acc = {}
    for l in open(path):
        m = line.match(l.strip())
        if not m or m.group(1) not in fams:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3)))
        kind = fams[m.group(1)]
        if kind == "request":
            if labels.get("verb") != "POST" or labels.get("resource") != "pods":
                continue
            key = "request POST pods"
        else:
            if labels.get("operation") != "CREATE":
                continue
            key = f"{kind} {labels.get('type')} {labels.get('name', '')}".strip()
        acc.setdefault(key, [0.0, 0.0])[m.group(2) == "count"] += float(m.group(4))
    return acc
a, b = read(before), read(after)
split = {}
for key, (s1, n1) in b.items():
    s0, n0 = a.get(key, [0.0, 0.0])
    if n1 - n0 > 0:
        split[key] = {"calls": round((n1 - n0) / creates, 2), "ms": round((s1 - s0) * 1000 / creates, 2)}
json.dump(split, open(out, "w"))
print("  admission per create (calls, ms): " + "; ".join(
    f"{k} {v['calls']}x {v['ms']}" for k, v in sorted(split.items())
    if k.startswith(("step", "webhook", "request")) or v["ms"] >= 0.05))
PY
}
HZ=$(getconf CLK_TCK)
clear_pods() {
  k -o /dev/null -X DELETE "$API/api/v1/namespaces/$NS/pods" || true
  for _ in $(seq 120); do
    n=$(k "$API/api/v1/namespaces/$NS/pods?limit=1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
    [ "$n" = 0 ] && return; sleep 1
  done
}
# The smoke of a pod each mode gets: the stored object, its size and the webhook's changes.
RESULTS="$TMP/results.tsv"
: > "$RESULTS"
for rep in $(seq "$REPS"); do
  for c in $CLIENTS; do
    for mode in $MODES; do
      register "$mode"
      clear_pods
      hook=; hport=; case $mode in noop) hook=$NOOP_PID hport=$NPORT;; winlint) hook=$WINLINT_PID hport=$WPORT;; replay) hook=$REPLAY_PID hport=$RPORT;; esac
      a0=$(cpu $APISERVER); e0=$(cpu $ETCD); h0=${hook:+$(cpu $hook)}
      scrape "$TMP/m0"
      # PERF=DIR: a CPU profile of the webhook during each run (perf report -i DIR/…).
      perf_pid=
      if [ -n "${PERF:-}" ] && [ -n "$hook" ]; then
        perf record -q -F 299 -g -p "$hook" -o "$PERF/$mode-$rep-$c.data" -- sleep "$DUR" >/dev/null 2>&1 &
        perf_pid=$!
      fi
      out=$(wrk -t2 -c"$c" -d"${DUR}s" --latency -s "$TMP/load.lua" "$API")
      [ -z "$perf_pid" ] || wait "$perf_pid" || true
      # The API server's connections to the webhook (one when it speaks HTTP/2 to it).
      conns=${hport:+$(ss -Htn state established "( sport = :$hport )" | wc -l)}
      a1=$(cpu $APISERVER); e1=$(cpu $ETCD); h1=${hook:+$(cpu $hook)}
      scrape "$TMP/m1"
      rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
      total=$(awk '/requests in/ {print $1}' <<<"$out")
      p50=$(awk '$1=="50%" {print $2}' <<<"$out"); p99=$(awk '$1=="99%" {print $2}' <<<"$out")
      bad=$(awk '/Non-2xx/ {print $NF}' <<<"$out"); bad=${bad:-0}
      per() { python3 -c "print(f'{($2 - $1) / $HZ * 1000 / max($total, 1):.2f}')"; }
      line="$rep	$c	$mode	$rps	$p50	$p99	$bad	$(per "$a0" "$a1")	$(per "$e0" "$e1")	${hook:+$(per "$h0" "$h1")}"
      echo "$line" >> "$RESULTS"
      printf 'rep %s  clients %-3s %-8s %8s/s  p50 %-8s p99 %-8s non-2xx %s  CPU-s per 1000 creates: apiserver %s etcd %s webhook %s\n' \
        "$rep" "$c" "$mode" "$rps" "$p50" "$p99" "$bad" $(cut -f8-10 <<<"$line" | tr '\t' ' ')
      [ -z "$conns" ] || echo "  API server connections to the webhook: $conns"
      admission_split "$TMP/m0" "$TMP/m1" "$total" "$TMP/split-$rep-$c-$mode.json"
    done
  done
done
# A stored pod of each OS from the last winlint run, for the record (patch size and shape).
if [[ " $MODES " == *" winlint "* ]]; then
  register winlint
  for os in windows linux; do
    k -o "$TMP/stored-$os.json" -X POST -H 'Content-Type: application/json' "$API/api/v1/namespaces/$NS/pods" --data-binary "@$TMP/$os.json"
    python3 - "$TMP/$os.json" "$TMP/stored-$os.json" "$os" <<'PY'
import json, sys
sent, stored, os_ = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
ann = stored["metadata"].get("annotations", {})
print(f"{os_} pod as stored: {len(json.dumps(stored, separators=(',', ':')))} B; "
      f"nodeSelector {stored['spec'].get('nodeSelector')}, os {stored['spec'].get('os')}, "
      f"annotations {ann}", file=sys.stderr)
PY
  done
fi
python3 - "$RESULTS" "$TMP" <<'PY'
import glob, json, os, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def ms(s):
    for unit, f in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if s.endswith(unit):
            return float(s[:-len(unit)]) * f
    return float("nan")
by = {}
for rep, c, mode, rps, p50, p99, bad, *_ in rows:
    by.setdefault((int(c), mode), []).append((int(rep), float(rps), ms(p50), ms(p99), int(bad)))
print("\n| clients | mode | creates/s (median; runs) | p50 ms | p99 ms (median; runs) | non-2xx |")
print("|---|---|---|---|---|---|")
for (c, mode), v in sorted(by.items()):
    r = [x[1] for x in v]; p99 = [x[3] for x in v]
    print(f"| {c} | {mode} | {statistics.median(r):.0f} ({', '.join(f'{x:.0f}' for x in r)}) "
          f"| {statistics.median([x[2] for x in v]):.1f} "
          f"| {statistics.median(p99):.1f} ({', '.join(f'{x:.0f}' for x in p99)}) | {sum(x[4] for x in v)} |")
print("\nwinlint / noop, same rep (throughput ratio; p99 ratio):")
for c in sorted({c for c, _ in by}):
    w = {x[0]: x for x in by.get((c, "winlint"), [])}; n = {x[0]: x for x in by.get((c, "noop"), [])}
    pairs = [(w[r][1] / n[r][1], w[r][3] / n[r][3]) for r in sorted(w) if r in n]
    if pairs:
        print(f"  clients {c}: " + "; ".join(f"{t:.2f}x, p99 {p:.2f}x" for t, p in pairs))
# The API server's admission account (its /metrics), medians over the reps: calls and ms per create.
splits = {}
for f in glob.glob(os.path.join(sys.argv[2], "split-*.json")):
    _, rep, c, mode = os.path.basename(f)[:-5].split("-", 3)
    for key, v in json.load(open(f)).items():
        splits.setdefault((int(c), mode), {}).setdefault(key, []).append((v["calls"], v["ms"]))
print("\nAPI server admission per create (median calls x, median ms), from its /metrics:")
for (c, mode), keys in sorted(splits.items()):
    parts = [f"{k} {statistics.median(x[0] for x in v):.2f}x {statistics.median(x[1] for x in v):.2f}"
             for k, v in sorted(keys.items())
             if k.startswith(("step", "webhook", "request")) or statistics.median(x[1] for x in v) >= 0.05]
    print(f"  clients {c} {mode}: " + "; ".join(parts))
PY
