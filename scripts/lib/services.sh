# Shared helpers for scripts/: make sure the local Postgres and Redis that
# the services and tests use are running, installing them on a bare Debian
# or Ubuntu machine. Source this file; do not run it.

COULER_PG_HOST=${COULER_PG_HOST:-127.0.0.1}
COULER_PG_PORT=${COULER_PG_PORT:-5432}
COULER_REDIS_PORT=${COULER_REDIS_PORT:-6379}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  echo "installing $* from the Debian archive" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pg_up() {
  if command -v pg_isready >/dev/null; then
    pg_isready -q -h "$COULER_PG_HOST" -p "$COULER_PG_PORT"
  else
    (exec 3<>"/dev/tcp/$COULER_PG_HOST/$COULER_PG_PORT") 2>/dev/null
  fi
}

ensure_postgres() {
  pg_up && return 0
  local fresh=0
  if ! command -v pg_ctlcluster >/dev/null; then
    apt_install postgresql
    fresh=1
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if [ "$fresh" -eq 1 ]; then
    # A development machine: let local TCP clients in without a password,
    # as the project's default DATABASE_URL expects.
    local hba="/etc/postgresql/$version/main/pg_hba.conf"
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
  fi
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 50); do pg_up && return 0; sleep 0.2; done
  echo "postgres did not come up on $COULER_PG_HOST:$COULER_PG_PORT" >&2
  return 1
}

redis_up() {
  if command -v redis-cli >/dev/null; then
    [ "$(redis-cli -h 127.0.0.1 -p "$COULER_REDIS_PORT" ping 2>/dev/null)" = "PONG" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$COULER_REDIS_PORT") 2>/dev/null
  fi
}

ensure_redis() {
  redis_up && return 0
  command -v redis-server >/dev/null || apt_install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port "$COULER_REDIS_PORT" --save '' --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis_up && return 0; sleep 0.1; done
  echo "redis did not come up on 127.0.0.1:$COULER_REDIS_PORT" >&2
  return 1
}

ensure_services() {
  ensure_postgres
  ensure_redis
}

# The local engine runs every step in a bubblewrap sandbox; host networking
# for steps (local.sandbox.network = "host") also needs iproute2 and nftables.
ensure_sandbox() {
  command -v bwrap >/dev/null || apt_install bubblewrap
  command -v ip >/dev/null || apt_install iproute2
  command -v nft >/dev/null || apt_install nftables
}

# Node 20+ and npm build the portal (Debian's nodejs is older: use the
# machine's when it is new enough).
ensure_node() {
  if ! command -v node >/dev/null || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
    apt_install nodejs npm
  fi
}

# Debian's Chromium for the portal's browser tests (playwright-core drives
# it; nothing is downloaded).
ensure_browser() {
  command -v chromium >/dev/null || apt_install chromium
}

# What tests run besides the services: the local engine's sandbox tools,
# busybox (compiled step wrappers
# must work under its sh as well as dash), unshare (the fake kubelet
# gives each pod a private /tmp) and an S3-compatible server (the cache
# asks object stores whether a hit's artifacts are still there).
ensure_test_tools() {
  ensure_sandbox
  ensure_browser
  command -v busybox >/dev/null || apt_install busybox
  command -v unshare >/dev/null || apt_install util-linux
  # Host programs the Couler SDK's example programs run as steps (the local
  # engine ignores images): cowsay, and `python` for scripts.
  [ -x /usr/games/cowsay ] || apt_install cowsay
  [ -e /usr/bin/python ] || apt_install python-is-python3
  "$(dirname "${BASH_SOURCE[0]}")/../s3-server" --setup
}

# What scripts/check-deploy reads the deployment files with, offline: Debian's
# docker-compose (v1; `config` needs no Docker daemon) and Debian's kubectl
# (`kubectl kustomize`). Debian's kubectl is unpacked from its package into
# .tools/ rather than installed: the machine may have another package's
# /usr/bin/kubectl (e.g. the Google Cloud CLI's), which dpkg would refuse to
# overwrite. Prints the path of that kubectl.
ensure_deploy_tools() {
  command -v docker-compose >/dev/null || apt_install docker-compose
  local tools
  tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.tools"
  local dir="$tools/kubernetes-client"
  mkdir -p "$tools"
  (
    flock 9
    [ -x "$dir/usr/bin/kubectl" ] && exit 0
    local download
    download=$(mktemp -d)
    chmod 755 "$download"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # apt warns when its sandbox user cannot write the directory; harmless.
    (cd "$download" && apt-get download -qq kubernetes-client 2>/dev/null)
    rm -rf "$dir"
    dpkg-deb -x "$download"/kubernetes-client_*.deb "$dir"
    rm -rf "$download"
  ) 9>"$tools/kubernetes-client.lock" >&2 || {
    echo "could not unpack Debian's kubernetes-client into $dir" >&2
    return 1
  }
  echo "$dir/usr/bin/kubectl"
}

# Drops databases left behind by earlier test runs that were killed.
drop_test_databases() {
  command -v psql >/dev/null || return 0
  local db
  for db in $(psql -h "$COULER_PG_HOST" -p "$COULER_PG_PORT" -U postgres -d postgres -tAc \
      "SELECT datname FROM pg_database WHERE datname LIKE 'couler\_test\_%'" 2>/dev/null); do
    psql -h "$COULER_PG_HOST" -p "$COULER_PG_PORT" -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  done
}

# Keys earlier test runs left in Redis: every test works under a prefix of
# its own (couler-test-…, couler-e2e-…), and some entries have no TTL.
drop_test_keys() {
  command -v redis-cli >/dev/null || return 0
  local pattern
  for pattern in 'couler-test-*' 'couler-e2e-*'; do
    redis-cli -h 127.0.0.1 -p "$COULER_REDIS_PORT" --scan --pattern "$pattern" 2>/dev/null \
      | xargs -r -d '\n' -n 500 redis-cli -h 127.0.0.1 -p "$COULER_REDIS_PORT" unlink >/dev/null 2>&1 || true
  done
}
