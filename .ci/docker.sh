#!/usr/bin/env bash
# Make a Docker engine answer and the rewardsmith sandbox image exist. Idempotent; safe to run again.
# Exits 0 with a printed reason when the engine cannot start here, so docker tests skip instead of failing.
set -u

DATA_ROOT="${REWARDSMITH_DOCKER_ROOT:-/var/lib/rewardsmith-docker}"
SOCKET="${REWARDSMITH_DOCKER_SOCKET:-/var/run/docker.sock}"
IMAGE="${REWARDSMITH_SANDBOX_IMAGE:-rewardsmith-sandbox:latest}"
PYTHON="${PYTHON:-python3}"
export DOCKER_HOST="unix://${SOCKET}"

engine_answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if ! command -v dockerd >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null 2>&1 || true
  fi
fi

if ! engine_answers; then
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "docker.sh: SKIP docker: dockerd is not installed and could not be installed (apt-get install docker.io)"
    exit 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "docker.sh: SKIP docker: no engine answers at ${SOCKET} and starting dockerd needs root"
    exit 0
  fi
  mkdir -p "${DATA_ROOT}/data" "${DATA_ROOT}/exec"
  LOG="${DATA_ROOT}/dockerd.log"
  echo "docker.sh: starting dockerd (data root ${DATA_ROOT}, socket ${SOCKET}, log ${LOG})"
  nohup setsid dockerd \
    --data-root "${DATA_ROOT}/data" --exec-root "${DATA_ROOT}/exec" \
    --pidfile "${DATA_ROOT}/dockerd.pid" -H "unix://${SOCKET}" \
    --storage-driver overlay2 --iptables=false --ip-masq=false --bridge=none \
    >"${LOG}" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    engine_answers && break
    sleep 1
  done
  if ! engine_answers; then
    echo "docker.sh: SKIP docker: dockerd did not answer within 60 s; last log lines:"
    tail -n 15 "${LOG}" 2>/dev/null | sed 's/^/  /'
    exit 0
  fi
fi
echo "docker.sh: engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) answers at ${SOCKET}"

# build-image returns at once when the image exists and was built from the current package list.
echo "docker.sh: making sure image ${IMAGE} is current (debootstrap offline when it is not; a cached root filesystem makes this seconds)"
if ! "${PYTHON}" -m rewardsmith sandbox build-image --image "${IMAGE}"; then
  # The engine answers, so a failed build is a rewardsmith bug, not a missing engine: fail loudly.
  echo "docker.sh: FAILED: the engine answers but building ${IMAGE} failed (see above)" >&2
  exit 1
fi
