#!/usr/bin/env bash
# The whole test suite, as the README's second command runs it: install, lint, test.
set -euo pipefail
cd "$(dirname "$0")/.."

# The browser tests (tests/browser) drive Debian's Chromium with Playwright; Playwright's
# own browser download is never used. Their screenshots need an emoji font and a Japanese
# (CJK) font, or every emoji and every Japanese character is a box. Install whatever of
# these is missing with apt, even when Chromium is already there. If that is not possible
# here, go on: the browser tests then fail with a message saying what is missing.
missing_browser_packages() {
    [ -x "${GRACE_CHROMIUM:-/usr/bin/chromium}" ] || echo chromium
    if command -v fc-list >/dev/null 2>&1; then
        fc-list : family | grep -qi "Noto Color Emoji" || echo fonts-noto-color-emoji
        [ -n "$(fc-list ':lang=ja' family)" ] || echo fonts-noto-cjk
    else
        dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || echo fonts-noto-color-emoji
        dpkg -s fonts-noto-cjk >/dev/null 2>&1 || echo fonts-noto-cjk
    fi
}

install_browser_packages() {
    local packages sudo="" log
    packages=$(missing_browser_packages | xargs)
    [ -z "$packages" ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "warning: missing $packages and there is no apt-get to install them;" \
            "the browser tests will fail (or set GRACE_CHROMIUM to a Chromium binary)." >&2
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "warning: missing $packages and this user cannot install them" \
                "(not root, no sudo); the browser tests will fail." >&2
            return 0
        fi
        sudo="sudo -n"
    fi
    echo "Installing $packages for the browser tests…" >&2
    log=$(mktemp)
    # shellcheck disable=SC2086 # one word per package
    if ! { $sudo apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages; } \
        >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "warning: could not install $packages; the browser tests will fail." >&2
    fi
    rm -f "$log"
}
install_browser_packages

# The storage, durable and fault tests run on SQLite and on PostgreSQL. Install Debian's
# PostgreSQL when it is missing (its binaries land in /usr/lib/postgresql/*/bin, not on
# PATH), start a throw-away cluster on a private port and socket directory, point the
# tests at it, and stop it however the run ends.
have_postgres() {
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null
}

install_postgres() {
    have_postgres && return 0
    local sudo="" log
    command -v apt-get >/dev/null 2>&1 || return 0
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || return 0
        sudo="sudo -n"
    fi
    echo "Installing postgresql for the database tests…" >&2
    log=$(mktemp)
    if ! { $sudo apt-get update -qq &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } \
        >"$log" 2>&1; then
        tail -n 20 "$log" >&2
    fi
    rm -f "$log"
}
install_postgres

python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
ruff check .
ruff format --check .

if [ -z "${GRACE_TEST_POSTGRES_URL:-}" ]; then
    pg_dir="${TMPDIR:-/tmp}/grace-pg-$$-$RANDOM"
    trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
    if ! GRACE_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$pg_dir"); then
        echo "error: could not start PostgreSQL for the database tests" \
            "(install postgresql, or set GRACE_TEST_POSTGRES_URL to an admin URL)." >&2
        exit 1
    fi
    export GRACE_TEST_POSTGRES_URL
    echo "PostgreSQL for the tests: $GRACE_TEST_POSTGRES_URL" >&2
fi
# The suite runs in parallel worker processes (pytest-xdist). Part of its time is spent
# waiting — on real `grace` processes killed and restarted, leases running out, 40 s of
# Slack 429s and a 40 s database lock — so it uses more workers than a 2-core machine has
# cores. (Commands whose process boundary is not the behaviour under test run in the
# test's own process: tests/durable/helpers.grace_here.) Each worker takes one test at a time (--maxschedchunk 1), in the order
# tests/ordering.py gives: the long ones first, the quick ones filling in around them.
# GRACE_TEST_WORKERS sets how many (0: one process, no xdist). Arguments go to pytest as
# they are: `bash scripts/test.sh tests/faults -x`.
python -m pytest -q -n "${GRACE_TEST_WORKERS:-4}" --maxschedchunk 1 "$@"

# Where a Docker engine runs, build the image and check it starts and has the PostgreSQL
# driver (tests/test_dockerfile.py checks the Dockerfile's contents everywhere else).
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    docker build -q -t grace-slack:test . >/dev/null
    docker run --rm grace-slack:test sh -c 'grace --help >/dev/null && python -c "import asyncpg"'
    echo "Docker image grace-slack:test built and checked." >&2
fi
