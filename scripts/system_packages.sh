#!/usr/bin/env bash
# Debian packages the project needs. Installed when running as root; otherwise the exact
# command is printed and the script fails, so nothing half-works later.
set -euo pipefail

need=()
python_bin=${PYTHON:-python3}
"$python_bin" -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
[[ -f /usr/share/wordnet/data.noun ]] || need+=(wordnet-base)
[[ -f /usr/share/wordnet/index.sense ]] || need+=(wordnet-sense-index)
if [[ "${WITH_BROWSER:-0}" == 1 ]]; then
  command -v chromium >/dev/null || need+=(chromium)
  command -v chromedriver >/dev/null || need+=(chromium-driver)
fi

if ((${#need[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) == 0 ]]; then
  echo "Installing Debian packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
else
  echo "Missing Debian packages. Install them with:" >&2
  echo "  sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
