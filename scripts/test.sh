#!/usr/bin/env bash
# The whole test suite, as the README's second command runs it: install, lint, test.
set -euo pipefail
cd "$(dirname "$0")/.."

# The browser tests (tests/browser) drive Debian's Chromium with Playwright; Playwright's
# own browser download is never used. Install Chromium once if it is missing. If that is
# not possible here, go on: those tests then fail with a message saying what is missing.
install_chromium() {
    [ -x "${GRACE_CHROMIUM:-/usr/bin/chromium}" ] && return 0
    local sudo="" log
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "warning: /usr/bin/chromium is missing and there is no apt-get to install it;" \
            "the browser tests will fail (or set GRACE_CHROMIUM to a Chromium binary)." >&2
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "warning: /usr/bin/chromium is missing and this user cannot install it" \
                "(not root, no sudo); the browser tests will fail." >&2
            return 0
        fi
        sudo="sudo -n"
    fi
    echo "Installing Debian's chromium for the browser tests…" >&2
    log=$(mktemp)
    if ! { $sudo apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq chromium fonts-noto-color-emoji; } >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "warning: could not install chromium; the browser tests will fail." >&2
    fi
    rm -f "$log"
}
install_chromium

python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
ruff check .
ruff format --check .
python -m pytest -q "$@"
