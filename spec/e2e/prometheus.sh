#!/usr/bin/env bash
# Installs Debian's `prometheus` package (no prebuilt binary is downloaded), so the e2e tier can run
# rxkube/metrics' output through `promtool check metrics` and have a real Prometheus server scrape the
# example controller (spec/e2e/prometheusServer.ts starts it on loopback). Does nothing when promtool
# is already on PATH.
#
# Usage: spec/e2e/prometheus.sh         install if missing, then print promtool's path
# Needs root (or sudo) and apt-get; the package's service is not started: the specs start their own server.
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  echo "PROMTOOL=$(command -v promtool)"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "prometheus.sh: promtool is missing and this machine has no apt-get; install Prometheus's promtool by hand" >&2
  exit 1
fi

sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "prometheus.sh: installing promtool needs root" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

# The package's scripts would start a Prometheus server; RUNLEVEL=1 keeps invoke-rc.d from starting it.
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo_cmd[@]}" env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null

if ! command -v promtool >/dev/null 2>&1; then
  echo "prometheus.sh: the prometheus package installed but promtool is not on PATH" >&2
  exit 1
fi
echo "PROMTOOL=$(command -v promtool)"
