# GRACE for Slack: the service image (`grace serve`, HTTP mode on port 3000, or Socket
# Mode when SLACK_APP_TOKEN is set). Build and run:
#
#   docker build -t grace-slack .
#   docker run --rm -v grace-data:/data grace-slack grace ingest --sample
#   docker run -d --name grace -p 3000:3000 -v grace-data:/data \
#     -e SLACK_BOT_TOKEN -e SLACK_SIGNING_SECRET grace-slack
#
# /data holds the embedded knowledge base (Qdrant Edge) and the SQLite database; the
# embedded engine lets one process open it at a time: ingest before starting the server.
# For several replicas use PostgreSQL (GRACE_DATABASE_URL; the driver is in the image)
# and a Qdrant server (QDRANT_URL): compose.yaml runs that topology.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GRACE_DATA_DIR=/data \
    GRACE_LOG_FORMAT=json

WORKDIR /app

# Only what the package needs: metadata (pyproject.toml, README.md as its readme) and
# the four packages, with their package data (sample KB, migrations).
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY blocks ./blocks
COPY bot ./bot
COPY storage ./storage

# The README's install step, non-editable (the image needs no source checkout), with the
# PostgreSQL driver so that every documented mode runs from this one image.
RUN pip install ".[postgres]" \
    && groupadd --system grace \
    && useradd --system --gid grace --home-dir /app --no-create-home --shell /usr/sbin/nologin grace \
    && mkdir -p /data \
    && chown grace:grace /data

USER grace
VOLUME ["/data"]
EXPOSE 3000

# slim has no curl: probe /healthz with the standard library (a 503 raises → unhealthy).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

CMD ["grace", "serve", "--port", "3000"]
